import { badRequest, notImplemented } from '../../../core/errors.ts';
import type { ProviderSet } from '../../../core/providers.ts';
import type { ScannerProvider, ScanResult, ScanTarget } from '../../../core/primitives/scanners.ts';
import type { Subject } from './settings.ts';

/** Analyzers spec 4.10 names that no built-in package supplies, and what each would need. */
export const UNAVAILABLE: Record<string, string> = {
  behavioral: 'it runs skill scripts in an instrumented sandbox; no provider package supplies it here',
  reputation:
    'it asks a URL-reputation service and needs that service and its API key; no provider package supplies it',
  'cloud-analysis':
    "it sends items to a vendor's cloud analysis and needs its API key; no provider package supplies it",
  meta: 'it combines other analyzers; list them instead',
  cisco: "it is a vendor's hosted scanner; no provider package supplies it",
};

/** What one analyzer did: its result, or why it failed (never treated as safe). */
export type AnalyzerOutcome =
  | { analyzer: string; ok: true; result: ScanResult }
  | { analyzer: string; ok: false; error: string };

/** The spec 4.10 key variable each subject's key-backed `llm` analyzer reads (agents use the server key). */
export const LLM_KEY_VARS: Record<Subject, string[]> = {
  server: ['MCP_SCANNER_LLM_API_KEY'],
  agent: ['MCP_SCANNER_LLM_API_KEY'],
  skill: ['SKILL_SECURITY_LLM_API_KEY'],
};

export class AnalyzerSet {
  /**
   * @param keyJudges the `llm` analyzer per subject built from the spec's key variables; used only when no
   *   scanners instance is named `llm` (a configured instance wins).
   */
  constructor(
    private readonly providers: ProviderSet,
    private readonly keyJudges: Partial<Record<Subject, ScannerProvider>> = {},
  ) {}

  /** The scanner that runs `name` for this subject: a configured instance, else the key-backed llm judge. */
  private scanner(name: string, kind: Subject): ScannerProvider | undefined {
    const p = this.providers.get<ScannerProvider>('scanners', name);
    if (p || name !== 'llm') return p;
    return this.keyJudges[kind];
  }

  /** Scanner instances of this process (kind `scanners`). */
  names(): string[] {
    return this.providers.names('scanners');
  }

  /** Why an analyzer cannot scan this subject, or undefined when it can. */
  problem(name: string, kind: Subject): string | undefined {
    const p = this.scanner(name, kind);
    if (!p && name === 'llm')
      return `Analyzer 'llm' has no judge for ${kind}s: set ${LLM_KEY_VARS[kind].join(' or ')} (an OpenAI-compatible API key; OPENAI_BASE_URL for another endpoint) or configure a scanners instance named 'llm' of type llm`;
    if (!p) {
      // Own keys only: an analyzer asked for as `constructor` is unknown, not Object.prototype's member.
      const why = Object.hasOwn(UNAVAILABLE, name) ? UNAVAILABLE[name] : undefined;
      return why
        ? `Analyzer '${name}' is not available: ${why}`
        : `Unknown analyzer '${name}'. Available: ${this.names().join(', ') || '(none)'}`;
    }
    if (!p.capabilities.targets.includes(kind)) return `Analyzer '${name}' does not scan ${kind}s`;
    return undefined;
  }

  /** For request-time analyzer lists: 501 for a known-unavailable analyzer, 400 for an unknown or unfit one. */
  check(names: string[], kind: Subject): void {
    for (const n of names) {
      const problem = this.problem(n, kind);
      if (!problem) continue;
      if (Object.hasOwn(UNAVAILABLE, n) && !this.providers.get('scanners', n))
        throw notImplemented('SB_ERR_SCAN_ANALYZER_UNAVAILABLE', problem);
      throw badRequest('SB_ERR_SCAN_ANALYZER_UNKNOWN', problem);
    }
  }

  /**
   * Every analyzer on the target at once, each bounded by the timeout. An
   * analyzer that is missing, throws or runs out of time is a failed outcome.
   */
  async run(names: string[], kind: Subject, target: ScanTarget, timeoutMs: number): Promise<AnalyzerOutcome[]> {
    return Promise.all(
      names.map(async (analyzer): Promise<AnalyzerOutcome> => {
        const problem = this.problem(analyzer, kind);
        if (problem) return { analyzer, ok: false, error: problem };
        const p = this.scanner(analyzer, kind)!;
        let timer: NodeJS.Timeout | undefined;
        try {
          const result = await Promise.race([
            p.scan(target),
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`analyzer '${analyzer}' did not finish within ${timeoutMs / 1000} s`)),
                timeoutMs,
              );
            }),
          ]);
          if (!result.analyzed)
            return { analyzer, ok: false, error: `analyzer '${analyzer}' inspected nothing (${result.summary})` };
          return { analyzer, ok: true, result };
        } catch (err) {
          const message = (err as Error).message;
          return {
            analyzer,
            ok: false,
            error: message.startsWith(`analyzer '${analyzer}'`) ? message : `analyzer '${analyzer}' failed: ${message}`,
          };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }
}
