import type { ScannerProvider, ScannersCapabilities } from '../../core/primitives/scanners.ts';
import type { ProviderFactory } from '../../core/provider.ts';

const CAPABILITIES: ScannersCapabilities = { targets: ['server', 'agent', 'skill'], analyzes: false };

/**
 * FINDS NOTHING. Every target passes with severity `SAFE` and `analyzed: false`
 * so the registry works with no scanner installed; the result says in words
 * that nothing was inspected, and `analyzed` lets the registry show the item
 * as unscanned rather than vetted.
 */
export const noopScanner: ProviderFactory<ScannerProvider> = {
  type: 'noop',
  kind: 'scanners',
  autoInstance: true,
  description: 'Passes everything without inspecting it (finds nothing)',
  create: (name) => ({
    name,
    type: 'noop',
    kind: 'scanners',
    capabilities: CAPABILITIES,
    async scan(target) {
      return {
        scanner: name,
        target_kind: target.kind,
        target_name: target.name,
        severity: 'SAFE',
        is_safe: true,
        threat_names: [],
        summary: `Not scanned: the noop scanner '${name}' inspects nothing and reports no findings; configure a real scanner for security analysis`,
        findings: [],
        analyzed: false,
        scanned_at: new Date().toISOString(),
      };
    },
    healthcheck: async () => 'ok',
    close: async () => {},
  }),
};
