import { randomUUID } from 'node:crypto';
import type {
  GenerationRecord,
  LogEntry,
  ObservabilityCapabilities,
  ObservabilityProvider,
  SessionSummary,
  Trace,
  TraceScore,
} from '../../core/primitives/observability.ts';
import type { ProviderFactory } from '../../core/provider.ts';

const CAPABILITIES: ObservabilityCapabilities = {
  ingest: true,
  query: true,
  logs: true,
  generations: true,
  scores: true,
  sessions: true,
};

/** Per list: the process keeps at most this many records, oldest dropped first, so a long-running noop server stays small. */
const DEFAULT_MAX_RECORDS = 10_000;

function window<T>(items: T[], offset: number, limit: number): { page: T[]; total: number } {
  return { page: items.slice(offset, offset + limit), total: items.length };
}

/** A bounded insertion-ordered map: setting past `max` evicts the oldest entry. */
class Ring<T> {
  private readonly m = new Map<string, T>();
  constructor(private readonly max: number) {}
  set(id: string, v: T) {
    this.m.delete(id);
    this.m.set(id, v);
    while (this.m.size > this.max) this.m.delete(this.m.keys().next().value as string);
  }
  get(id: string) {
    return this.m.get(id);
  }
  /** Newest first: what a trace viewer shows. */
  newest(): T[] {
    return [...this.m.values()].reverse();
  }
  clear() {
    this.m.clear();
  }
}

/**
 * Traces, logs, generations and scores kept in process memory (newest first on
 * read), so GET after POST works and the agent runtime's `auto_trace` has
 * somewhere to go with no backend configured. Nothing leaves the process.
 * Option `max_records` bounds each list (default 10000).
 */
export const noopObservability: ProviderFactory<ObservabilityProvider> = {
  type: 'noop',
  kind: 'observability',
  autoInstance: true,
  description: 'Keeps traces, logs, generations and scores in memory (bounded)',
  create: (name, options) => {
    const max =
      typeof options.max_records === 'number' && options.max_records > 0 ? options.max_records : DEFAULT_MAX_RECORDS;
    const traces = new Ring<Trace>(max);
    const logs = new Ring<LogEntry>(max);
    const generations = new Ring<GenerationRecord>(max);
    const scores = new Ring<TraceScore>(max);
    const copy = <T>(v: T): T => structuredClone(v);
    const now = () => new Date().toISOString();

    /** Sessions derived from traces; with `userId`, from that user's traces only (a session id may be reused). */
    const sessions = (userId?: string): SessionSummary[] => {
      const by = new Map<string, SessionSummary>();
      for (const t of traces.newest()) {
        if (!t.session_id || (userId !== undefined && t.user_id !== userId)) continue;
        const s = by.get(t.session_id);
        if (!s)
          by.set(t.session_id, {
            session_id: t.session_id,
            user_id: t.user_id,
            trace_count: 1,
            first_seen: t.timestamp,
            last_activity: t.timestamp,
          });
        else {
          s.trace_count++;
          if (t.timestamp < s.first_seen) s.first_seen = t.timestamp;
          if (t.timestamp > s.last_activity) s.last_activity = t.timestamp;
        }
      }
      return [...by.values()].sort((a, b) => b.last_activity.localeCompare(a.last_activity));
    };

    return {
      name,
      type: 'noop',
      kind: 'observability',
      capabilities: CAPABILITIES,
      async ingestTrace(input) {
        const trace: Trace = {
          trace_id: input.trace_id ?? randomUUID(),
          name: input.name ?? '',
          user_id: input.user_id ?? null,
          session_id: input.session_id ?? null,
          input: input.input ?? null,
          output: input.output ?? null,
          tags: [...(input.tags ?? [])],
          spans: copy(input.spans ?? []),
          metadata: copy(input.metadata ?? {}),
          timestamp: input.timestamp ?? now(),
        };
        // Ingesting an id again replaces the trace: clients update a trace by re-sending it.
        traces.set(trace.trace_id, trace);
        return { trace_id: trace.trace_id, status: 'accepted' };
      },
      async getTrace(id) {
        const t = traces.get(id);
        return t && copy(t);
      },
      async updateTrace(id, update) {
        const t = traces.get(id);
        if (!t) return undefined;
        const { metadata, tags, ...fields } = copy(update);
        // Metadata is merged (what a later step adds must not drop what an earlier one wrote); the rest replaces.
        const next: Trace = {
          ...t,
          ...fields,
          ...(tags ? { tags } : {}),
          metadata: { ...t.metadata, ...(metadata ?? {}) },
        };
        traces.set(id, next);
        return copy(next);
      },
      async listTraces(q) {
        const hits = traces
          .newest()
          .filter(
            (t) =>
              (q.user_id === undefined || t.user_id === q.user_id) &&
              (q.session_id === undefined || t.session_id === q.session_id),
          )
          .filter(
            (t) => (q.name === undefined || t.name === q.name) && (q.tag === undefined || t.tags.includes(q.tag)),
          );
        const { page, total } = window(hits, q.offset, q.limit);
        return { traces: page.map(copy), total };
      },
      async ingestLog(input) {
        const entry: LogEntry = {
          log_id: randomUUID(),
          message: input.message,
          level: input.level ?? 'info',
          trace_id: input.trace_id ?? null,
          metadata: copy(input.metadata ?? {}),
          timestamp: input.timestamp ?? now(),
        };
        logs.set(entry.log_id, entry);
        return copy(entry);
      },
      async listLogs(q) {
        const hits = logs
          .newest()
          .filter(
            (l) =>
              (q.trace_id === undefined || l.trace_id === q.trace_id) && (q.level === undefined || l.level === q.level),
          );
        const { page, total } = window(hits, q.offset, q.limit);
        return { logs: page.map(copy), total };
      },
      async ingestGeneration(input) {
        const gen: GenerationRecord = {
          generation_id: input.generation_id ?? randomUUID(),
          trace_id: input.trace_id,
          name: input.name ?? 'generation',
          model: input.model ?? null,
          input: input.input ?? null,
          output: input.output ?? null,
          usage: copy(input.usage ?? {}),
          metadata: copy(input.metadata ?? {}),
          start_time: input.start_time ?? null,
          end_time: input.end_time ?? null,
          timestamp: now(),
        };
        generations.set(gen.generation_id, gen);
        return copy(gen);
      },
      async listGenerations(q) {
        const hits = generations
          .newest()
          .filter(
            (g) =>
              (q.trace_id === undefined || g.trace_id === q.trace_id) && (q.model === undefined || g.model === q.model),
          );
        const { page, total } = window(hits, q.offset, q.limit);
        return { generations: page.map(copy), total };
      },
      async ingestScore(input) {
        const score: TraceScore = {
          score_id: randomUUID(),
          trace_id: input.trace_id,
          name: input.name,
          value: input.value,
          observation_id: input.observation_id ?? null,
          comment: input.comment ?? null,
          data_type: input.data_type ?? null,
          metadata: copy(input.metadata ?? {}),
          timestamp: now(),
        };
        scores.set(score.score_id, score);
        return copy(score);
      },
      async listScores(q) {
        const hits = scores
          .newest()
          .filter(
            (s) =>
              (q.trace_id === undefined || s.trace_id === q.trace_id) && (q.name === undefined || s.name === q.name),
          );
        const { page, total } = window(hits, q.offset, q.limit);
        return { scores: page.map(copy), total };
      },
      async listSessions(q) {
        const hits = sessions(q.user_id);
        const { page, total } = window(hits, q.offset, q.limit);
        return { sessions: page, total };
      },
      async getSession(id) {
        const session = sessions().find((s) => s.session_id === id);
        if (!session) return undefined;
        return {
          session,
          traces: traces
            .newest()
            .filter((t) => t.session_id === id)
            .map(copy),
        };
      },
      healthcheck: async () => 'ok',
      close: async () => {
        traces.clear();
        logs.clear();
        generations.clear();
        scores.clear();
      },
    };
  },
};
