import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { notFound } from '../../core/errors.ts';
import type { OnlineConfig, OnlineConfigRequest } from '../../core/primitives/evaluations.ts';
import type { ObservabilityProvider, Trace } from '../../core/primitives/observability.ts';
import type { Collection } from '../../core/store-types.ts';

export interface OnlineOptions {
  /** Traces waiting for a judge beyond this are skipped (and counted), so a slow judge cannot grow memory. */
  queueSize: number;
  /** Judgements running at once. */
  concurrency: number;
}

export interface OnlineStats {
  queued: number;
  judged: number;
  skipped: number;
  failed: number;
}

/** Judge one trace with one evaluator and record the score on it (provider.ts). */
export type JudgeTrace = (trace: Trace, evaluatorId: string, configId: string) => Promise<void>;

function matches(cfg: OnlineConfig, t: Trace): boolean {
  const f = cfg.filter;
  if (!f) return true;
  return (
    (f.name === undefined || t.name === f.name) &&
    (f.tag === undefined || t.tags.includes(f.tag)) &&
    (f.user_id === undefined || t.user_id === f.user_id)
  );
}

/**
 * Online evaluation: configs in the core store; each new trace this process
 * stores (observability's onTrace) is sampled per config and judged in the
 * background through a bounded queue. Only the process that stored a trace
 * sees it, so replicas never judge a trace twice.
 */
export class OnlineEvaluation {
  private configs: OnlineConfig[] | undefined;
  private readonly queue: Array<{ trace: Trace; cfg: OnlineConfig }> = [];
  private running = 0;
  private detach: (() => void) | undefined;
  private closed = false;
  private readonly idle = new Set<() => void>();
  readonly stats: OnlineStats = { queued: 0, judged: 0, skipped: 0, failed: 0 };

  constructor(
    private readonly col: Collection<OnlineConfig>,
    private readonly opts: OnlineOptions,
    private readonly judgeTrace: JudgeTrace,
    private readonly logger: FastifyBaseLogger | undefined,
  ) {}

  /** Listen to an observability provider once it exists (it is built after evaluations). */
  attach(obs: ObservabilityProvider | undefined): boolean {
    if (this.detach || this.closed) return true;
    if (!obs?.onTrace) return false;
    this.detach = obs.onTrace((t) => this.offer(t));
    return true;
  }

  private async all(): Promise<OnlineConfig[]> {
    if (!this.configs) {
      const list: OnlineConfig[] = [];
      for await (const [, c] of this.col.entries()) list.push(c);
      this.configs = list.sort((a, b) => a.created_at.localeCompare(b.created_at));
    }
    return this.configs;
  }

  async create(req: OnlineConfigRequest, exists: (id: string) => Promise<boolean>): Promise<OnlineConfig> {
    for (const id of req.evaluator_ids)
      if (!(await exists(id)))
        throw notFound('SB_ERR_EVALUATIONS_EVALUATOR_NOT_FOUND', `Evaluator '${id}' of evaluator_ids not found`);
    const cfg: OnlineConfig = {
      config_id: randomUUID(),
      name: req.name,
      evaluator_ids: req.evaluator_ids,
      sampling_rate: req.sampling_rate ?? 1,
      description: req.description ?? '',
      config: req.config ?? {},
      ...(req.filter ? { filter: req.filter } : {}),
      status: 'active',
      created_at: new Date().toISOString(),
    };
    await this.col.set(cfg.config_id, cfg);
    this.configs = undefined;
    return cfg;
  }

  get = (id: string) => this.col.get(id);

  async list(): Promise<{ configs: OnlineConfig[] }> {
    this.configs = undefined;
    return { configs: [...(await this.all())] };
  }

  async delete(id: string): Promise<boolean> {
    const gone = await this.col.delete(id);
    this.configs = undefined;
    return gone;
  }

  private offer(trace: Trace): void {
    void this.all()
      .then((configs) => {
        for (const cfg of configs) {
          if (!matches(cfg, trace) || Math.random() >= cfg.sampling_rate) continue;
          if (this.queue.length >= this.opts.queueSize) {
            this.stats.skipped++;
            this.logger?.warn({ config_id: cfg.config_id }, 'online evaluation queue full: a trace was not judged');
            continue;
          }
          this.queue.push({ trace, cfg });
          this.stats.queued++;
        }
        this.pump();
      })
      .catch((err: unknown) => this.logger?.warn({ err }, 'online evaluation could not read its configs'));
  }

  private pump(): void {
    while (!this.closed && this.running < this.opts.concurrency && this.queue.length) {
      const { trace, cfg } = this.queue.shift()!;
      this.running++;
      void (async () => {
        for (const evaluatorId of cfg.evaluator_ids) {
          try {
            await this.judgeTrace(trace, evaluatorId, cfg.config_id);
            this.stats.judged++;
          } catch (err) {
            this.stats.failed++;
            this.logger?.warn({ err, trace_id: trace.trace_id, evaluator_id: evaluatorId }, 'online evaluation failed');
          }
        }
      })().finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.queue.length === 0) for (const f of this.idle) f();
      });
    }
  }

  /** Resolves when nothing is queued or running (tests, shutdown). */
  drained(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((res) => {
      const f = () => {
        this.idle.delete(f);
        res();
      };
      this.idle.add(f);
    });
  }

  close(): void {
    this.closed = true;
    this.detach?.();
    this.queue.length = 0;
  }
}
