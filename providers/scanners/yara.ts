import { unavailable } from '../../core/errors.ts';
import type { ScannerProvider, ScannersCapabilities } from '../../core/primitives/scanners.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { resultOf } from './result.ts';
import { targetTexts } from './texts.ts';
import { defaultRulesDir, YaraEngine } from './yara-engine.ts';

const CAPABILITIES: ScannersCapabilities = { targets: ['server', 'agent', 'skill'], analyzes: true, engine: 'yara-x' };

/**
 * A real YARA engine (YARA-X through its Node binding) over Switchboard's own
 * rule pack (rules/, one file per category), compiled once when the instance
 * is built. Option `rules_dir` points at another pack. Where the binding does
 * not load the instance still exists, reports `down`, and every scan throws,
 * so the registry records scan_failed instead of calling anything safe.
 */
export const yaraScanner: ProviderFactory<ScannerProvider> = {
  type: 'yara',
  kind: 'scanners',
  autoInstance: true,
  description: 'YARA-X over the rules/ pack: prompt injection, hidden text, command injection, exfiltration, shadowing',
  create: async (name, options) => {
    if (options.rules_dir !== undefined && typeof options.rules_dir !== 'string')
      throw new Error("option 'rules_dir' must be a folder path");
    const engine = await YaraEngine.compile((options.rules_dir as string | undefined) ?? defaultRulesDir());
    return {
      name,
      type: 'yara',
      kind: 'scanners',
      capabilities: { ...CAPABILITIES, rule_files: engine?.ruleFiles ?? [] },
      async scan(target) {
        if (!engine)
          throw unavailable('SB_ERR_SCANNER_UNAVAILABLE', `The YARA engine (@litko/yara-x) is not loadable here`);
        return resultOf(name, target, engine.scanTexts(targetTexts(target), name));
      },
      healthcheck: async () => (engine ? 'ok' : 'down'),
      close: async () => {},
    };
  },
};
