import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Prometheus metrics at /metrics. One registry per app instance, not
 * prom-client's global one: tests build many apps in one process and a shared
 * registry would refuse the second registration (and mix their counts).
 * Requests are labelled by the route pattern, never the raw URL, so ids in
 * paths cannot blow up the label cardinality.
 */
export default fp(
  async (app) => {
    const registry = new Registry();
    const requests = new Counter({
      name: 'switchboard_http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'switchboard_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    const calls = new Counter({
      name: 'switchboard_provider_calls_total',
      help: 'Provider method calls by primitive, provider instance, method and outcome',
      labelNames: ['primitive', 'provider', 'method', 'outcome'] as const,
      registers: [registry],
    });
    const callDuration = new Histogram({
      name: 'switchboard_provider_call_duration_seconds',
      help: 'Provider method latency by primitive, provider instance and outcome',
      labelNames: ['primitive', 'provider', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
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

    const callChildren = new Map<string, { count: ReturnType<typeof calls.labels>; time: ReturnType<typeof callDuration.labels> }>();
    app.sb.providers.observe((kind, provider, method, outcome, seconds) => {
      const key = `${kind}\u0000${provider}\u0000${method}\u0000${outcome}`;
      let c = callChildren.get(key);
      if (!c) {
        c = { count: calls.labels({ primitive: kind, provider, method, outcome }), time: callDuration.labels({ primitive: kind, provider, outcome }) };
        callChildren.set(key, c);
      }
      c.count.inc();
      c.time.observe(seconds);
    });

    // Label children are cached per (method, route, status): prom-client hashes
    // the label set on every call otherwise, and this runs on every request.
    const children = new Map<string, { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> }>();
    // Callback style: an async hook costs a promise per request.
    app.addHook('onResponse', (request, reply, done) => {
      // Unmatched URLs share one label: the raw URL of a 404 is attacker-chosen.
      const route = request.routeOptions.url ?? '(unmatched)';
      if (route !== '/metrics') {
        const key = `${request.method} ${route} ${reply.statusCode}`;
        let c = children.get(key);
        if (!c) {
          const labels = { method: request.method, route, status: String(reply.statusCode) };
          c = { count: requests.labels(labels), time: duration.labels(labels) };
          children.set(key, c);
        }
        c.count.inc();
        c.time.observe(reply.elapsedTime / 1000);
      }
      done();
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'switchboard-metrics', decorators: { fastify: ['sb'] } },
);
