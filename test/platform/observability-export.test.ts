import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentApp } from '../agents/helpers.ts';

t.setTimeout(900_000);

/** A local OTLP/HTTP collector: decodes the JSON export requests and keeps the spans. */
async function collector() {
  const spans: Array<{ name: string; attributes: Record<string, unknown> }> = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              name: s.name,
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [
                  a.key,
                  a.value.stringValue ??
                    (a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.boolValue),
                ]),
              ),
            });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => server.close() };
}

t.test(
  'an agent run on the store provider with otlp_endpoint reaches the collector with GenAI attributes',
  async (t) => {
    const rx = await collector();
    t.teardown(rx.close);
    const app = await agentApp(t, {
      script: [
        {
          turns: [{ tool_calls: [{ name: 'list_memories', input: {} }] }, { content: 'done' }],
        },
      ],
      memory: 'in_memory',
      config: {
        providers: {
          observability: {
            default: 'store',
            instances: { store: { type: 'store', options: { otlp_endpoint: rx.url, otlp_delay_ms: 10 } } },
          },
        },
      },
    });
    await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: 'exporter', model: 'm', primitives: { memory: { enabled: true } } },
    });
    const r = await app.inject({ method: 'POST', url: '/api/v1/agents/exporter/chat', payload: { message: 'go' } });
    t.equal(r.statusCode, 200, r.body);
    t.equal((await app.inject({ method: 'POST', url: '/api/v1/observability/flush' })).statusCode, 202);
    const names = rx.spans.map((s) => s.name).sort();
    t.same(names, ['agent:exporter', 'chat m', 'chat m', 'execute_tool list_memories']);
    const chat = rx.spans.find((s) => s.name === 'chat m')!;
    t.match(chat.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'm',
      'gen_ai.usage.input_tokens': Number,
      'gen_ai.usage.output_tokens': Number,
      'switchboard.trace_id': r.json().metadata.trace_id,
    });
    t.match(rx.spans.find((s) => s.name === 'agent:exporter')!.attributes, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'exporter',
    });
    const metrics = (await app.inject({ url: '/metrics' })).body;
    t.match(metrics, /switchboard_otlp_spans_total\{provider="store",outcome="exported"\} 4/);
    t.match(metrics, /switchboard_otlp_spans_total\{provider="store",outcome="dropped"\} 0/);
    // The flush above also wrote the write-behind queue to the store: the trace is counted as written.
    t.match(metrics, /switchboard_observability_store_writes_total\{provider="store",outcome="written"\} 1\n/);
    t.match(metrics, /switchboard_observability_store_writes_total\{provider="store",outcome="dropped"\} 0/);
    t.match(metrics, /switchboard_observability_store_writes_total\{provider="store",outcome="failed"\} 0/);
    t.match(metrics, /switchboard_observability_store_queued\{provider="store"\} 0/);
  },
);
