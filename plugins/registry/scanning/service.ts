import type { FastifyBaseLogger } from 'fastify';
import { SwitchboardError } from '../../../core/errors.ts';
import type { ScanTarget } from '../../../core/primitives/scanners.ts';
import type { Catalog } from '../catalog/context.ts';
import type { AgentRecord, ServerRecord, SkillRecord } from '../catalog/records.ts';
import { heldUnhealthy, SECURITY_PENDING, type ScanHook, type ScanVerdict } from '../catalog/scan.ts';
import type { AnalyzerSet } from './analyzers.ts';
import { agentReport, type ScanSummary, serverReport, skillReport, summarize } from './reports.ts';
import type { ScanResults } from './results-store.ts';
import type { ScanSettings, Subject } from './settings.ts';

export function serverTarget(s: ServerRecord): ScanTarget {
  const tools = s.tools.length ? s.tools : (s.tool_list_json ?? []);
  return {
    kind: 'server',
    name: s.path,
    tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })),
  };
}

export function agentTarget(a: AgentRecord): ScanTarget {
  return {
    kind: 'agent',
    name: a.path,
    card: {
      ...a.extra,
      name: a.name,
      description: a.description,
      url: a.url,
      version: a.version,
      provider: a.provider,
      protocol_version: a.protocol_version,
      security_schemes: a.security_schemes,
      skills: a.skills,
    },
  };
}

export function skillTarget(k: SkillRecord): ScanTarget {
  return { kind: 'skill', name: k.path, skill_md: k.skill_md };
}

/** What a scan decides for an item: disable it (and tag it), leave it, or refuse a registration. */
export interface Decision {
  summary: ScanSummary;
  block: boolean;
  tag: boolean;
  refuse: boolean;
}

const toolsKey = (s: ServerRecord | undefined) =>
  JSON.stringify((s?.tools ?? []).map((t) => [t.name, t.description ?? '', t.inputSchema ?? {}]));

/**
 * Runs the configured analyzers for registration, rescans and discovered
 * tools; stores every result; decides blocking per spec 3 and 4.10 and the
 * on_scan_failure setting. Plugged into the catalog as its ScanHook.
 */
export class ScanService implements ScanHook {
  /** Tool list each server was last scanned with, so registration's own write does not trigger a second scan. */
  private readonly scannedTools = new Map<string, string>();

  constructor(
    readonly settings: ScanSettings,
    readonly analyzers: AnalyzerSet,
    readonly results: ScanResults,
    private readonly catalog: Catalog,
    private readonly log: FastifyBaseLogger,
  ) {}

  private decide(kind: Subject, summary: ScanSummary): Decision {
    const s = this.settings[kind];
    const unsafe = summary.critical + summary.high > 0;
    if (unsafe) return { summary, block: s.block_unsafe, tag: s.add_pending_tag, refuse: false };
    if (summary.scan_failed) {
      const f = this.settings.on_scan_failure;
      return { summary, block: f !== 'allow', tag: f !== 'allow' && s.add_pending_tag, refuse: f === 'block' };
    }
    return { summary, block: false, tag: false, refuse: false };
  }

  /** Scan a server's tools, store the report, decide. */
  async scanServer(s: ServerRecord, analyzers?: string[]): Promise<Decision> {
    const names = analyzers ?? this.settings.server.analyzers;
    const target = serverTarget(s);
    this.scannedTools.set(s.path, toolsKey({ ...s, tools: s.tools.length ? s.tools : (s.tool_list_json ?? []) }));
    const outcomes = await this.analyzers.run(names, 'server', target, this.settings.server.timeout_seconds * 1000);
    const at = new Date().toISOString();
    const summary = summarize('server', s.path, outcomes, at);
    const tools = s.tools.length ? s.tools : (s.tool_list_json ?? []);
    await this.results.save('server', s.path, s.proxy_pass_url, serverReport(s, tools, outcomes, summary), at);
    return this.decide('server', summary);
  }

  async scanAgent(a: AgentRecord, analyzers?: string[]): Promise<Decision> {
    this.scannedContent.set(`agent:${a.path}`, JSON.stringify(agentTarget(a).card));
    const names = analyzers ?? this.settings.agent.analyzers;
    const outcomes = await this.analyzers.run(
      names,
      'agent',
      agentTarget(a),
      this.settings.agent.timeout_seconds * 1000,
    );
    const at = new Date().toISOString();
    const summary = summarize('agent', a.path, outcomes, at);
    await this.results.save('agent', a.path, a.path, agentReport(a, outcomes, summary), at);
    return this.decide('agent', summary);
  }

  async scanSkill(k: SkillRecord, analyzers?: string[]): Promise<Decision> {
    this.scannedContent.set(`skill:${k.path}`, k.skill_md);
    const names = analyzers ?? this.settings.skill.analyzers;
    const outcomes = await this.analyzers.run(
      names,
      'skill',
      skillTarget(k),
      this.settings.skill.timeout_seconds * 1000,
    );
    const at = new Date().toISOString();
    const summary = summarize('skill', k.path, outcomes, at);
    await this.results.save('skill', k.path, k.path, skillReport(k, outcomes, summary), at);
    return this.decide('skill', summary);
  }

  /** Registration-time verdict; a refused registration is a 503 that names the failure. */
  private verdict(d: Decision): ScanVerdict {
    if (d.refuse)
      throw new SwitchboardError(
        503,
        'SB_ERR_SCAN_FAILED',
        `Registration refused: the security scan of ${d.summary.path} failed (${(d.summary.errors ?? []).join('; ')}) and on_scan_failure is block`,
      );
    if (d.block) d.summary.blocked = true;
    return { blocked: d.block, tag: d.tag, summary: { ...d.summary } };
  }

  private registrationScans(kind: Subject): boolean {
    return this.settings[kind].enabled && this.settings[kind].on_registration;
  }

  async server(record: ServerRecord): Promise<ScanVerdict> {
    if (!this.registrationScans('server')) return { blocked: false };
    return this.verdict(await this.scanServer(record));
  }

  async agent(record: AgentRecord): Promise<ScanVerdict> {
    if (!this.registrationScans('agent')) return { blocked: false };
    return this.verdict(await this.scanAgent(record));
  }

  async skill(record: SkillRecord): Promise<ScanVerdict> {
    if (!this.registrationScans('skill')) return { blocked: false };
    return this.verdict(await this.scanSkill(record));
  }

  /**
   * A rescan's effect on a stored item: blocked (disabled, tagged) when the
   * scan says so; a clean scan lifts a block an earlier scan set (the tag is
   * the mark of a scan's block, so only tagged items are re-enabled).
   */
  static applyRescan<T extends { is_enabled: boolean; tags: string[] }>(record: T, d: Decision): T {
    if (d.block) {
      d.summary.blocked = true;
      return heldUnhealthy({
        ...record,
        is_enabled: false,
        tags: d.tag && !record.tags.includes(SECURITY_PENDING) ? [...record.tags, SECURITY_PENDING] : record.tags,
      });
    }
    if (d.summary.is_safe && record.tags.includes(SECURITY_PENDING))
      return { ...record, is_enabled: true, tags: record.tags.filter((t) => t !== SECURITY_PENDING) };
    return record;
  }

  /** Card or SKILL.md each agent and skill was last scanned with, so edits that change them are scanned too. */
  private readonly scannedContent = new Map<string, string>();

  /**
   * Agents and skills edited after registration (PUT with a new description,
   * skills or skill_md_url) are scanned again when their scanned content
   * changed, and blocked if it turned unsafe: an edit must not bypass the
   * registration scan.
   */
  watchEdits(): () => void {
    const watch = <T extends { path: string; is_enabled: boolean; tags: string[] }>(
      kind: 'agent' | 'skill',
      index: {
        onChange(fn: (c: { kind: string; key: string; value?: T; previous?: T }) => void): () => void;
        get(k: string): T | undefined;
        lock<R>(k: string, fn: () => Promise<R>): Promise<R>;
        set(k: string, v: T): Promise<void>;
      },
      content: (r: T) => string,
      scan: (r: T) => Promise<Decision>,
    ) =>
      index.onChange((c) => {
        if (c.kind !== 'updated' || !c.value || !c.previous || !this.registrationScans(kind)) return;
        const key = `${kind}:${c.key}`;
        // Only a change of content: a toggle (an admin's review) must not be undone by a scan of the same text.
        if (content(c.value) === content(c.previous) || content(c.value) === this.scannedContent.get(key)) return;
        this.scannedContent.set(key, content(c.value));
        void (async () => {
          try {
            const current = index.get(c.key);
            if (!current) return;
            const d = await scan(current);
            if (!d.block) return;
            await index.lock(c.key, async () => {
              const now = index.get(c.key);
              if (now)
                await index.set(c.key, { ...ScanService.applyRescan(now, d), updated_at: new Date().toISOString() });
            });
          } catch (err) {
            this.log.warn({ err, path: c.key }, `scan of an edited ${kind} failed`);
          }
        })();
      });
    const stops = [
      watch(
        'agent',
        this.catalog.agents.index,
        (a) => JSON.stringify(agentTarget(a).card),
        (a) => this.scanAgent(a),
      ),
      watch(
        'skill',
        this.catalog.skills.index,
        (k) => k.skill_md,
        (k) => this.scanSkill(k),
      ),
    ];
    return () => {
      for (const stop of stops) stop();
    };
  }

  /**
   * Servers registered without tool_list_json get their tools from the health
   * checker's discovery: scan that list when it first appears or changes, and
   * block the server if it is unsafe (spec 3: the tool list as discovered).
   */
  watchDiscoveredTools(): () => void {
    const busy = new Set<string>();
    return this.catalog.servers.onChange((c) => {
      if (c.kind === 'deleted' || !c.value || !this.registrationScans('server')) return;
      // Only a new tool list: a toggle (an admin's review) must not be undone by a scan of the same tools.
      const tools = toolsKey(c.value);
      if (!c.value.tools.length || tools === toolsKey(c.previous) || tools === this.scannedTools.get(c.key)) return;
      const path = c.key;
      if (busy.has(path)) return;
      busy.add(path);
      void (async () => {
        try {
          const current = this.catalog.servers.get(path);
          if (!current) return;
          const d = await this.scanServer(current);
          if (d.block || (d.summary.is_safe && current.tags.includes(SECURITY_PENDING)))
            await this.catalog.servers.patch(path, (r) => ScanService.applyRescan(r, d));
        } catch (err) {
          this.log.warn({ err, path }, 'scan of discovered tools failed');
        } finally {
          busy.delete(path);
        }
      })();
    });
  }
}
