import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { GenerationRecord, Span, Trace } from '../../core/primitives/observability.ts';
import { randomHex } from './records.ts';

/**
 * OTLP/HTTP export through the official OpenTelemetry JS SDK (loaded lazily:
 * processes that export nothing never import it). Spans go through a
 * BatchSpanProcessor, so ingest never waits for the collector; its queue is
 * bounded (`maxQueueSize`) and what does not fit is dropped and counted
 * (`stats()`, shown in /metrics). Attribute names follow the OpenTelemetry
 * GenAI semantic conventions (gen_ai.*).
 */
export interface OtlpOptions {
  /** Base URL as in OTEL_EXPORTER_OTLP_ENDPOINT; `/v1/traces` is appended unless present. */
  endpoint: string;
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  serviceName: string;
}

export interface ExportStats {
  exported: number;
  dropped: number;
  failed: number;
}

export interface OtlpExport {
  exportTrace(trace: Trace): void;
  exportGeneration(gen: GenerationRecord): void;
  stats(): ExportStats;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

/** OTel trace ids are 32 hex digits: a UUID without dashes is one already; anything else is hashed. */
export function otelTraceId(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (/^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex)) return hex;
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

type Attrs = Record<string, string | number | boolean | string[]>;

const ms = (t: unknown): number | undefined => {
  const n = typeof t === 'string' ? Date.parse(t) : Number.NaN;
  return Number.isNaN(n) ? undefined : n;
};

function usageAttrs(usage: unknown, into: Attrs): void {
  if (!usage || typeof usage !== 'object') return;
  const u = usage as Record<string, unknown>;
  const inTok = u.input_tokens ?? u.prompt_tokens;
  const outTok = u.output_tokens ?? u.completion_tokens;
  if (typeof inTok === 'number') into['gen_ai.usage.input_tokens'] = inTok;
  if (typeof outTok === 'number') into['gen_ai.usage.output_tokens'] = outTok;
}

/** GenAI attributes of one span of a trace: generations are `chat` operations, tools `execute_tool`. */
function spanAttrs(s: Span): { name: string; attrs: Attrs } {
  const meta = (s.metadata ?? {}) as Record<string, unknown>;
  const attrs: Attrs = {};
  if (meta.type === 'generation') {
    const model = typeof meta.model === 'string' ? meta.model : undefined;
    attrs['gen_ai.operation.name'] = 'chat';
    if (model) attrs['gen_ai.request.model'] = model;
    if (typeof meta.provider === 'string') attrs['gen_ai.provider.name'] = meta.provider;
    usageAttrs(s.usage ?? meta.usage, attrs);
    return { name: model ? `chat ${model}` : s.name, attrs };
  }
  if (meta.type === 'tool') {
    attrs['gen_ai.operation.name'] = 'execute_tool';
    attrs['gen_ai.tool.name'] = s.name;
    if (typeof meta.call_id === 'string') attrs['gen_ai.tool.call.id'] = meta.call_id;
    return { name: `execute_tool ${s.name}`, attrs };
  }
  return { name: s.name, attrs };
}

export async function startOtlp(opts: OtlpOptions, logger?: FastifyBaseLogger): Promise<OtlpExport> {
  const api = await import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  type SpanExporter = InstanceType<typeof OTLPTraceExporter>;
  type ReadableSpan = Parameters<SpanExporter['export']>[0][number];

  const counts: ExportStats = { exported: 0, dropped: 0, failed: 0 };
  // The processor keeps its queue private, so the queue is mirrored: spans accepted minus spans handed to the exporter.
  let accepted = 0;
  let handedOver = 0;
  // Spans handed over whose export has not answered yet: a dead collector holds them until the export times out.
  let settled = 0;
  const inner = new OTLPTraceExporter({ url: tracesUrl(opts.endpoint), timeoutMillis: opts.exportTimeoutMillis });
  const exporter: SpanExporter = Object.assign(Object.create(inner) as SpanExporter, {
    export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]) {
      handedOver += spans.length;
      inner.export(spans, (result) => {
        settled += spans.length;
        if (result.code === 0) counts.exported += spans.length;
        else {
          counts.failed += spans.length;
          logger?.debug({ err: result.error }, 'OTLP export failed');
        }
        done(result);
      });
    },
  });
  const batch = new BatchSpanProcessor(exporter, {
    maxQueueSize: opts.maxQueueSize,
    maxExportBatchSize: Math.min(opts.maxExportBatchSize, opts.maxQueueSize),
    scheduledDelayMillis: opts.scheduledDelayMillis,
    exportTimeoutMillis: opts.exportTimeoutMillis,
  });
  /**
   * Spans that would not fit are dropped and counted before any is built. What counts against the queue size
   * is every span not yet answered for: queued, or in an export still waiting for the collector. A dead
   * collector answers only when each export times out, while the processor starts the next batch on its own
   * timeout, so exports (each holding its spans and their encoded body) piled up and every trace was still
   * built (bench/RESULTS.md). A trace goes whole or not at all: no orphan spans.
   */
  const fits = (n: number): boolean => {
    if (accepted - settled + n <= opts.maxQueueSize) return true;
    counts.dropped += n;
    return false;
  };
  const counting = {
    onStart: batch.onStart.bind(batch),
    onEnd(span: ReadableSpan) {
      if (accepted - handedOver >= opts.maxQueueSize) counts.dropped++;
      else accepted++;
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };
  // Root spans take the Switchboard trace id (as OTel hex), so a trace reads the same in both places.
  let nextTraceId: string | undefined;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [counting],
    idGenerator: {
      generateTraceId: () => nextTraceId ?? randomHex(16),
      // From the pooled CSPRNG bytes (records.ts): a randomBytes call per span showed in the export's profile.
      generateSpanId: () => randomHex(8),
    },
  });
  const tracer = provider.getTracer('switchboard');

  const root = (name: string, traceId: string, start: number, attrs: Attrs) => {
    nextTraceId = otelTraceId(traceId);
    try {
      return tracer.startSpan(name, { startTime: start, attributes: attrs, root: true });
    } finally {
      nextTraceId = undefined;
    }
  };

  return {
    exportTrace(trace) {
      if (!fits(trace.spans.length + 1)) return;
      const end = ms(trace.timestamp) ?? Date.now();
      const starts = trace.spans.map((s) => ms(s.start_time)).filter((n): n is number => n !== undefined);
      const start = Math.min(end, ...starts);
      const attrs: Attrs = { 'switchboard.trace_id': trace.trace_id };
      if (trace.session_id) attrs['session.id'] = trace.session_id;
      if (trace.user_id) attrs['user.id'] = trace.user_id;
      if (trace.tags.length) attrs['switchboard.tags'] = trace.tags;
      const agent = trace.metadata.agent_name;
      if (typeof agent === 'string') {
        attrs['gen_ai.operation.name'] = 'invoke_agent';
        attrs['gen_ai.agent.name'] = agent;
      }
      if (typeof trace.metadata.model === 'string') attrs['gen_ai.request.model'] = trace.metadata.model;
      const parent = root(trace.name || 'trace', trace.trace_id, start, attrs);
      const ctx = api.trace.setSpan(api.context.active(), parent);
      for (const s of trace.spans) {
        const { name, attrs: a } = spanAttrs(s);
        a['switchboard.trace_id'] = trace.trace_id;
        const sStart = ms(s.start_time) ?? start;
        tracer.startSpan(name, { startTime: sStart, attributes: a }, ctx).end(ms(s.end_time) ?? sStart);
      }
      parent.end(Math.max(end, start));
    },
    exportGeneration(gen) {
      if (!fits(1)) return;
      const attrs: Attrs = { 'gen_ai.operation.name': 'chat', 'switchboard.trace_id': gen.trace_id };
      if (gen.model) attrs['gen_ai.request.model'] = gen.model;
      usageAttrs(gen.usage, attrs);
      const start = ms(gen.start_time) ?? ms(gen.timestamp) ?? Date.now();
      root(gen.model ? `chat ${gen.model}` : gen.name, gen.trace_id, start, attrs).end(ms(gen.end_time) ?? start);
    },
    stats: () => ({ ...counts }),
    flush: () => provider.forceFlush(),
    close: () => provider.shutdown(),
  };
}
