import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot-metrics.ts';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Prometheus metrics at /metrics. One registry per app instance, not
 * prom-client's global one: tests build many apps in one process and a shared
 * registry would refuse the second registration (and mix their counts).
 * Requests are labelled by the route pattern, never the raw URL, so ids in
 * paths cannot blow up the label cardinality.
 */
export default fp(
  async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    const registry = new Registry();
    // The four families updated on every request / provider call are the cheap ones (hot-metrics.ts).
    const requests = new HotCounter(
      'switchboard_http_requests_total',
      'HTTP requests by method, route pattern and status',
      registry,
    );
    const duration = new HotHistogram(
      'switchboard_http_request_duration_seconds',
      'HTTP request latency by method, route pattern and status',
      LATENCY_BUCKETS,
      registry,
    );
    const calls = new HotCounter(
      'switchboard_provider_calls_total',
      'Provider method calls by primitive, provider instance, method and outcome',
      registry,
    );
    const callDuration = new HotHistogram(
      'switchboard_provider_call_duration_seconds',
      'Provider method latency by primitive, provider instance and outcome',
      LATENCY_BUCKETS,
      registry,
    );
    new Gauge({
      name: 'switchboard_process_resident_memory_bytes',
      help: 'Resident set size of the process',
      registers: [registry],
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'switchboard_providers',
      help: 'Provider instances by primitive',
      labelNames: ['primitive'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of app.sb.providers.all()) this.inc({ primitive: p.kind });
      },
    });

    // OTLP export (observability `store`): spans sent, failed, and dropped by its bounded queue, so a dead
    // collector shows here rather than in request latency.
    new Counter({
      name: 'switchboard_otlp_spans_total',
      help: 'Spans handed to OTLP export by observability provider and outcome (exported, failed, dropped)',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of app.sb.providers.all()) {
          const stats = (p as { exportStats?: () => Record<string, number> | undefined }).exportStats?.();
          if (stats)
            for (const outcome of ['exported', 'failed', 'dropped'])
              this.inc({ provider: p.name, outcome }, stats[outcome] ?? 0);
        }
      },
    });

    // Observability `store` writes behind the request (write-behind.ts): records written, dropped because the
    // queue was full, and dropped after the store failed every retry; the queue depth beside them.
    new Counter({
      name: 'switchboard_observability_store_writes_total',
      help: 'Observability records by provider and outcome (written, dropped: queue full, failed: store down past retries)',
      labelNames: ['provider', 'outcome'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of app.sb.providers.all()) {
          const stats = (p as { writeStats?: () => Record<string, number> }).writeStats?.();
          if (stats)
            for (const outcome of ['written', 'dropped', 'failed'])
              this.inc({ provider: p.name, outcome }, stats[outcome] ?? 0);
        }
      },
    });
    new Gauge({
      name: 'switchboard_observability_store_queued',
      help: 'Observability records waiting in the write-behind queue by provider',
      labelNames: ['provider'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of app.sb.providers.all()) {
          const stats = (p as { writeStats?: () => Record<string, number> }).writeStats?.();
          if (stats) this.set({ provider: p.name }, stats.queued ?? 0);
        }
      },
    });

    // Recorders are asked for once per wrapped provider method (core/providers.ts), so these maps are not on the call path;
    // they keep one series per label set if a method is wrapped again.
    const callCounts = new Map<string, ReturnType<typeof calls.child>>();
    // The duration histogram has no method label: its series are shared by the methods of one provider.
    const callTimes = new Map<string, ReturnType<typeof callDuration.child>>();
    app.sb.providers.observe((kind, provider, method, outcome) => {
      const countKey = `${kind}\u0000${provider}\u0000${method}\u0000${outcome}`;
      let count = callCounts.get(countKey);
      if (!count) callCounts.set(countKey, (count = calls.child({ primitive: kind, provider, method, outcome })));
      const timeKey = `${kind}\u0000${provider}\u0000${outcome}`;
      let time = callTimes.get(timeKey);
      if (!time) callTimes.set(timeKey, (time = callDuration.child({ primitive: kind, provider, outcome })));
      const c = count;
      const h = time;
      return (seconds) => {
        c.inc();
        h.observe(seconds);
      };
    });

    // Requests are timed and counted from their arrival (request-context.ts) to onSend, not to the
    // response's 'finish': an onResponse hook (or a Fastify logger) makes Fastify add and remove two
    // listeners on every response, the largest single cost a request paid for being observed. The cost
    // is that a reply hijacked for a stream is not counted, and the time stops when the payload is
    // handed to Node.
    type Series = { count: ReturnType<typeof requests.child>; time: ReturnType<typeof duration.child> };
    /** The series of one route pattern, by method and status: made on first use, then an array index. */
    const seriesOf = (route: string) => {
      const byMethod = new Map<string, Series[]>();
      return (method: string, status: number): Series => {
        let byStatus = byMethod.get(method);
        if (!byStatus) byMethod.set(method, (byStatus = []));
        let s = byStatus[status];
        if (!s) {
          const labels = { method, route, status: String(status) };
          s = byStatus[status] = { count: requests.child(labels), time: duration.child(labels) };
        }
        return s;
      };
    };
    const observe = (request: FastifyRequest, reply: FastifyReply, series: Series) => {
      const ms = performance.now() - request.sbStartedAt;
      series.count.inc();
      series.time.observe(ms / 1000);
      // One line per request at info, as Fastify's own logger would write it on 'finish'.
      // Request loggers are pino children or lazy ones (ops/logging.ts): both answer isLevelEnabled.
      if ((request.log as unknown as Pick<Logger, 'isLevelEnabled'>).isLevelEnabled('info'))
        request.log.info({ res: reply, responseTime: ms }, 'request completed');
    };
    // Each route gets its own onSend hook that knows its pattern, rather than one app-wide hook asking
    // Fastify for the route on every request (request.routeOptions builds an object each time).
    app.addHook('onRoute', (route) => {
      if (route.url === '/metrics') return;
      const series = seriesOf(route.url);
      const hook: onSendHookHandler = (request, reply, payload, done) => {
        observe(request, reply, series(request.method, reply.statusCode));
        done(null, payload);
      };
      route.onSend = [...[route.onSend ?? []].flat(), hook];
    });
    // Unmatched URLs share one label (the raw URL of a 404 is attacker-chosen); the not-found handler
    // (plugins/errors.ts) is not a route, so it reports here itself, as a 404 or (a known path under
    // another method) a 405.
    const unmatched = seriesOf('(unmatched)');
    app.decorate('countUnmatched', (request: FastifyRequest, reply: FastifyReply) =>
      observe(request, reply, unmatched(request.method, reply.statusCode === 405 ? 405 : 404)),
    );

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'switchboard-metrics', dependencies: ['switchboard-request-context'], decorators: { fastify: ['sb'] } },
);

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request no route matched (the not-found handler calls it; set by ops/metrics.ts). */
    countUnmatched?: (request: FastifyRequest, reply: FastifyReply) => void;
  }
}
