import type { FastifyBaseLogger } from 'fastify';
import type { HealthEntry } from './hub.ts';
import { probe, type DiscoveredTool, type ProbeTarget } from './probe.ts';

/** What the checker needs of a registered server; the catalog's repository provides it. */
export interface CheckableServer {
  path: string;
  enabled: boolean;
  /** Where to probe and with which headers (credential decrypted in memory only). */
  target: Omit<ProbeTarget, 'timeoutMs'>;
  /** The registered proxy_pass_url, judged by the address guard along with the target URL. */
  origin?: string;
}

export interface HealthRecord {
  health_status: string;
  last_checked_iso: string;
  /** Present when discovery found tools; absent keeps whatever tools the server had. */
  tools?: DiscoveredTool[];
}

export interface CheckerDeps {
  servers(): Promise<CheckableServer[]>;
  server(path: string): Promise<CheckableServer | undefined>;
  save(path: string, record: HealthRecord): Promise<HealthEntry>;
  onChange(changes: Record<string, HealthEntry>): void;
  /** The refused address class (link-local, metadata) one of the URLs reaches, or undefined. */
  blockedAddress?(...urls: Array<string | undefined>): Promise<string | undefined>;
  logger: FastifyBaseLogger;
}

export interface CheckerOptions {
  intervalMs: number;
  timeoutMs: number;
  concurrency: number;
}

/**
 * Periodic and on-demand health checks: bounded concurrency, and never two
 * checks of one server at once (a refresh during a sweep joins the running check).
 */
export class HealthChecker {
  private readonly inFlight = new Map<string, Promise<HealthEntry>>();
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly deps: CheckerDeps,
    private readonly opts: CheckerOptions,
  ) {}

  start(): void {
    if (this.opts.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      // A sweep still running when the next tick comes is not doubled.
      if (!this.sweeping) {
        this.sweeping = this.sweep()
          .then(() => undefined)
          .catch((err: Error) => this.deps.logger.warn({ err: err.message }, 'health sweep failed'))
          .finally(() => (this.sweeping = undefined));
      }
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Check every server once; returns each path's new entry. */
  async sweep(): Promise<Record<string, HealthEntry>> {
    const servers = await this.deps.servers();
    const results: Record<string, HealthEntry> = {};
    let next = 0;
    const worker = async () => {
      while (next < servers.length) {
        const s = servers[next++];
        try {
          results[s.path] = await this.check(s);
        } catch (err) {
          this.deps.logger.warn({ path: s.path, err: (err as Error).message }, 'health check failed to record');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.opts.concurrency, servers.length)) }, worker));
    return results;
  }

  /** Check one server now (refresh endpoints). */
  async checkPath(path: string): Promise<HealthEntry | undefined> {
    const s = await this.deps.server(path);
    return s ? this.check(s) : undefined;
  }

  private check(s: CheckableServer): Promise<HealthEntry> {
    const running = this.inFlight.get(s.path);
    if (running) return running;
    const p = this.run(s).finally(() => this.inFlight.delete(s.path));
    this.inFlight.set(s.path, p);
    return p;
  }

  private async run(s: CheckableServer): Promise<HealthEntry> {
    const now = new Date().toISOString();
    let record: HealthRecord;
    if (!s.enabled) {
      record = { health_status: 'disabled', last_checked_iso: now };
    } else if (await this.deps.blockedAddress?.(s.origin, s.target.url)) {
      // Never probed: the address is refused, so the backend is unusable as registered.
      record = { health_status: 'unhealthy: blocked address', last_checked_iso: now };
    } else {
      const r = await probe({ ...s.target, timeoutMs: this.opts.timeoutMs });
      if (r.reason) this.deps.logger.info({ path: s.path, status: r.status, reason: r.reason }, 'health check');
      record = { health_status: r.status, last_checked_iso: now, tools: r.status === 'healthy' && r.tools && r.tools.length > 0 ? r.tools : undefined };
    }
    const entry = await this.deps.save(s.path, record);
    this.deps.onChange({ [s.path]: entry });
    return entry;
  }
}
