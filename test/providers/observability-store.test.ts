import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { openStore, type Store } from '../../core/store.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { storeObservability, type StoreObservability } from '../../providers/store-observability/provider.ts';
import { wrap, type Stored } from '../../providers/store-observability/list.ts';
import { WriteBehind } from '../../providers/store-observability/write-behind.ts';
import { timeOrderedId } from '../../providers/store-observability/records.ts';
import type { Collection } from '../../core/store-types.ts';
import { observabilitySuite } from '../conformance/observability.ts';
import type { Runner } from '../conformance/kit.ts';
import { startRedis } from '../fixtures/redis-server.ts';
import { tempDir } from '../helpers/app.ts';

t.setTimeout(900_000);

const ctx = (store: Store): ProviderContext => ({
  store,
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});

/** A fresh instance name per case: cases share a store but never see each other's records. */
const make =
  (store: () => Promise<Store>, options: Record<string, unknown> = {}) =>
  async () => {
    const s = await store();
    const p = await storeObservability.create(`obs-${randomUUID()}`, { sweep_interval_ms: 0, ...options }, ctx(s));
    return Object.assign(Object.create(p), {
      close: async () => {
        await p.close();
        await s.close();
      },
    }) as StoreObservability;
  };

t.test('store on memory passes the observability conformance suite', (t) =>
  observabilitySuite(t as unknown as Runner, { make: make(() => openStore({ backend: 'memory' })) }),
);

t.test('store on SQLite passes the observability conformance suite', (t) =>
  observabilitySuite(t as unknown as Runner, {
    make: make(() => openStore({ backend: 'sqlite', dataDir: tempDir() })),
  }),
);

t.test('store on Redis passes the observability conformance suite', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  await observabilitySuite(t as unknown as Runner, {
    make: make(() => openStore({ backend: 'redis', url: redis.url })),
  });
});

t.test('time range and cursor paging', async (t) => {
  const p = await make(() => openStore({ backend: 'sqlite', dataDir: tempDir() }))();
  t.teardown(() => p.close());
  for (let i = 1; i <= 5; i++) await p.ingestTrace({ trace_id: `t${i}`, timestamp: `2026-01-01T00:00:0${i}.000Z` });
  const ranged = await p.listTraces!({
    limit: 50,
    offset: 0,
    from: '2026-01-01T00:00:02Z',
    to: '2026-01-01T00:00:04Z',
  });
  t.same(
    ranged.traces.map((x) => x.trace_id),
    ['t3', 't2'],
    'from is inclusive, to exclusive, offsets and missing milliseconds accepted',
  );
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 5; i++) {
    const page = await p.listTraces!({ limit: 2, offset: 0, ...(cursor ? { cursor } : {}) });
    seen.push(...page.traces.map((x) => x.trace_id));
    t.equal(page.total, 5);
    cursor = page.next_cursor ?? undefined;
    if (!cursor) break;
  }
  t.same(seen, ['t5', 't4', 't3', 't2', 't1'], 'cursor pages cover every trace once, newest first');
  // A trace arriving between pages does not shift the next page (an offset would repeat t3).
  const first = await p.listTraces!({ limit: 2, offset: 0 });
  await p.ingestTrace({ trace_id: 't6', timestamp: '2026-01-01T00:00:06.000Z' });
  const second = await p.listTraces!({ limit: 2, offset: 0, cursor: first.next_cursor! });
  t.same(
    second.traces.map((x) => x.trace_id),
    ['t3', 't2'],
  );
  await t.rejects(p.listTraces!({ limit: 2, offset: 0, cursor: 'bogus' }), {
    statusCode: 400,
    code: 'SB_ERR_OBSERVABILITY_BAD_CURSOR',
  });
});

/** Where retention runs: SQL on the writer thread (SQLite's own file), or reading and deleting here. */
const retentionStores: Array<[string, () => Promise<Store>, Record<string, unknown>]> = [
  ['SQLite, own file (writer thread, SQL)', () => openStore({ backend: 'sqlite', dataDir: tempDir() }), {}],
  ['SQLite, core file', () => openStore({ backend: 'sqlite', dataDir: tempDir() }), { own_file: false }],
  ['memory', () => openStore({ backend: 'memory' }), {}],
];

for (const [label, store, extra] of retentionStores) {
  t.test(`retention removes traces older than the age and beyond the count (${label})`, async (t) => {
    const p = await make(store, { retention_days: 7, max_records: 3, ...extra })();
    t.teardown(() => p.close());
    const now = Date.parse('2026-03-01T00:00:00.000Z');
    await p.ingestTrace({ trace_id: 'ancient', timestamp: '2026-01-01T00:00:00.000Z' });
    for (let i = 1; i <= 4; i++) await p.ingestTrace({ trace_id: `r${i}`, timestamp: `2026-02-28T00:00:0${i}.000Z` });
    await p.ingestLog!({ message: 'old', level: 'info', metadata: {}, timestamp: '2026-01-01T00:00:00.000Z' });
    const deleted = await p.sweep(now);
    t.equal(deleted, 3, 'ancient trace, old log, and r1 beyond max_records');
    t.same(
      (await p.listTraces!({ limit: 50, offset: 0 })).traces.map((x) => x.trace_id),
      ['r4', 'r3', 'r2'],
    );
    t.equal((await p.listLogs!({ limit: 50, offset: 0 })).total, 0);
  });

  t.test(`retention keeps exactly the newest by (time, order written) (${label})`, async (t) => {
    const p = await make(store, { retention_days: 30, max_records: 137, ...extra })();
    t.teardown(() => p.close());
    const now = Date.parse('2026-03-01T00:00:00.000Z');
    // 400 traces at shuffled times over 40 days, ten of them sharing one time (ties go to the later written).
    const times = Array.from({ length: 400 }, (_, i) => now - i * 8_640_000);
    for (let i = times.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [times[i], times[j]] = [times[j]!, times[i]!];
    }
    // The tie sits on the cut: 132 of the other traces are newer, so the 137 kept end inside the group.
    const tied = times.slice(10).sort((a, b) => b - a)[132]!;
    const written: Array<{ id: string; at: number }> = times.map((at, i) => ({ id: `t${i}`, at: i < 10 ? tied : at }));
    for (const w of written) await p.ingestTrace({ trace_id: w.id, timestamp: new Date(w.at).toISOString() });
    const cutoff = now - 30 * 86_400_000;
    const expected = written
      .map((w, order) => ({ ...w, order }))
      .filter((w) => w.at >= cutoff)
      .sort((a, b) => b.at - a.at || b.order - a.order)
      .slice(0, 137)
      .map((w) => w.id)
      .sort();
    const deleted = await p.sweep(now);
    const left = (await p.listTraces!({ limit: 1000, offset: 0 })).traces.map((x) => x.trace_id).sort();
    t.equal(expected.filter((id) => Number(id.slice(1)) < 10).length, 4, 'the cut falls inside the tie (4 of 10 kept)');
    t.same(left, expected, 'the newest 137 within 30 days, ties to the later written');
    t.equal(deleted, 400 - 137);
  });
}

t.test(
  'lists in SQL on the own file answer as the scan in JavaScript does: filters, windows, offsets, cursors',
  async (t) => {
    const dataDir = tempDir();
    const core = await openStore({ backend: 'sqlite', dataDir });
    const sql = await storeObservability.create('lists', { sweep_interval_ms: 0 }, ctx(core));
    const js = await storeObservability.create('lists', { sweep_interval_ms: 0, own_file: false }, ctx(core));
    t.teardown(async () => {
      await sql.close();
      await js.close();
      await core.close();
    });
    // Few distinct times, so many records tie on time and order by the sequence they were written in.
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i % 13)).toISOString();
    for (const p of [sql, js]) {
      for (let i = 0; i < 240; i++) {
        await p.ingestTrace({
          trace_id: `tr${i}`,
          name: `agent:${i % 3}`,
          user_id: `u${i % 5}`,
          session_id: `s${i % 7}`,
          tags: i % 4 === 0 ? ['agent', 'x'] : ['agent'],
          timestamp: at(i),
        });
        if (i % 3 === 0)
          await p.ingestLog!({
            message: `m${i}`,
            level: i % 2 ? 'info' : 'error',
            trace_id: `tr${i % 11}`,
            metadata: {},
          });
        if (i % 5 === 0)
          await p.ingestScore!({
            trace_id: `tr${i % 9}`,
            name: i % 2 ? 'a' : 'b',
            value: i % 2 ? 1 : 'c',
            data_type: i % 2 ? 'NUMERIC' : 'CATEGORICAL',
            metadata: i % 3 ? { config_id: `c${i % 2}` } : {},
          });
      }
      await p.flush!();
    }
    const mid = at(6);
    const idsOf = (items: Array<Record<string, unknown>>, key: string) => items.map((x) => x[key]);
    /** Every page of a query, by cursor from the first. */
    const walk = async (
      list: (c?: string) => Promise<{ items: Array<Record<string, unknown>>; next: string | null }>,
    ) => {
      const all: unknown[][] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 100; n++) {
        const page = await list(cursor);
        all.push(page.items.map((x) => x.trace_id ?? x.log_id ?? x.score_id));
        if (!page.next) break;
        cursor = page.next;
      }
      return all;
    };
    const traceQueries = [
      {},
      { user_id: 'u3' },
      { session_id: 's2', name: 'agent:1' },
      { tag: 'x' },
      { tag: 'nothing' },
      { from: mid },
      { to: mid, user_id: 'u1' },
      { offset: 17 },
      { offset: 500 },
    ];
    for (const q of traceQueries) {
      const base = { limit: 9, offset: 0, ...q };
      const [a, b] = [await sql.listTraces!(base), await js.listTraces!(base)];
      t.same(idsOf(a.traces, 'trace_id'), idsOf(b.traces, 'trace_id'), `traces ${JSON.stringify(q)}`);
      t.equal(a.total, b.total, `total ${JSON.stringify(q)}`);
      t.equal(a.next_cursor === null, b.next_cursor === null, `next page ${JSON.stringify(q)}`);
      const pages = (p: StoreObservability) =>
        walk(async (cursor) => {
          const r = await p.listTraces!({ ...base, offset: 0, ...(cursor ? { cursor } : {}) });
          return { items: r.traces, next: r.next_cursor ?? null };
        });
      t.same(await pages(sql), await pages(js), `every page by cursor ${JSON.stringify(q)}`);
    }
    for (const q of [{}, { level: 'error' }, { trace_id: 'tr3' }, { trace_id: 'tr3', level: 'info' }]) {
      const base = { limit: 7, offset: 0, ...q };
      const [a, b] = [await sql.listLogs!(base), await js.listLogs!(base)];
      t.same(
        a.logs.map((l) => l.message),
        b.logs.map((l) => l.message),
        `logs ${JSON.stringify(q)}`,
      );
      t.equal(a.total, b.total);
    }
    for (const q of [{}, { trace_id: 'tr0' }, { name: 'a', data_type: 'NUMERIC' as const }, { config_id: 'c1' }]) {
      const base = { limit: 5, offset: 0, ...q };
      const [a, b] = [await sql.listScores!(base), await js.listScores!(base)];
      t.same(
        a.scores.map((s) => [s.trace_id, s.name, s.value]),
        b.scores.map((s) => [s.trace_id, s.name, s.value]),
        `scores ${JSON.stringify(q)}`,
      );
      t.equal(a.total, b.total);
    }
    t.ok((await sql.listTraces!({ limit: 5, offset: 0, user_id: 'u3' })).total > 0, 'the filters match something');
  },
);

t.test('the periodic sweep runs on its own and stops on close', async (t) => {
  const store = await openStore({ backend: 'memory' });
  const p = await storeObservability.create('swept', { retention_days: 1, sweep_interval_ms: 20 }, ctx(store));
  await p.ingestTrace({ trace_id: 'old', timestamp: '2020-01-01T00:00:00.000Z' });
  await p.ingestTrace({ trace_id: 'new' });
  for (let i = 0; i < 200 && (await p.getTrace!('old')); i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(await p.getTrace!('old'), undefined, 'the sweep removed the old trace');
  t.ok(await p.getTrace!('new'), 'the new one stays');
  await p.close();
  await store.close();
});

t.test('scores: value must fit the data type (422), get and delete, filters', async (t) => {
  const p = await make(() => openStore({ backend: 'memory' }))();
  t.teardown(() => p.close());
  await t.rejects(p.ingestScore!({ trace_id: 'x', name: 'n', value: 'high', data_type: 'NUMERIC', metadata: {} }), {
    statusCode: 422,
    code: 'SB_ERR_OBSERVABILITY_SCORE_VALUE',
  });
  await t.rejects(p.ingestScore!({ trace_id: 'x', name: 'n', value: 2, data_type: 'BOOLEAN', metadata: {} }), {
    statusCode: 422,
    code: 'SB_ERR_OBSERVABILITY_SCORE_VALUE',
  });
  const s = await p.ingestScore!({
    trace_id: 'x',
    name: 'n',
    value: 1,
    data_type: 'BOOLEAN',
    metadata: { config_id: 'c' },
  });
  await p.ingestScore!({ trace_id: 'x', name: 'n', value: 'ok', data_type: 'CATEGORICAL', metadata: {} });
  t.same(
    (await p.listScores!({ data_type: 'BOOLEAN', limit: 50, offset: 0 })).scores.map((x) => x.score_id),
    [s.score_id],
  );
  t.same(
    (await p.listScores!({ config_id: 'c', limit: 50, offset: 0 })).scores.map((x) => x.score_id),
    [s.score_id],
  );
  t.equal((await p.getScore!(s.score_id))?.value, 1);
  t.equal(await p.deleteScore!(s.score_id), true);
  t.equal(await p.getScore!(s.score_id), undefined);
});

t.test('generation spans of a trace become generation records and count in the session tokens', async (t) => {
  const p = await make(() => openStore({ backend: 'memory' }))();
  t.teardown(() => p.close());
  const first = {
    trace_id: 'g1',
    session_id: 'sess',
    user_id: 'u',
    spans: [
      { name: 'turn 1', metadata: { type: 'generation', model: 'm' }, usage: { input_tokens: 10, output_tokens: 2 } },
      { name: 'search', metadata: { type: 'tool' } },
      { name: 'turn 2', metadata: { type: 'generation', model: 'm' }, usage: { input_tokens: 20, output_tokens: 5 } },
    ],
  };
  await p.ingestTrace(first);
  const gens = await p.listGenerations!({ trace_id: 'g1', limit: 50, offset: 0 });
  t.equal(gens.total, 2, 'one generation per generation span');
  t.match(gens.generations, [
    { model: 'm', usage: { input_tokens: 20 } },
    { model: 'm', usage: { input_tokens: 10 } },
  ]);
  await p.ingestTrace({ ...first });
  t.equal(
    (await p.listGenerations!({ trace_id: 'g1', limit: 50, offset: 0 })).total,
    2,
    'ingesting the trace again replaces, never duplicates, its generations',
  );
  await p.ingestGeneration!({
    trace_id: 'g1',
    name: 'extra',
    model: 'm2',
    usage: { prompt_tokens: 1, completion_tokens: 2 },
    metadata: {},
  });
  t.equal(
    (await p.listGenerations!({ limit: 50, offset: 0 })).total,
    3,
    'unfiltered: spans of every trace plus stored ones',
  );
  t.equal((await p.listGenerations!({ model: 'm2', limit: 50, offset: 0 })).total, 1);
  const sessions = await p.listSessions!({ limit: 50, offset: 0 });
  t.match(sessions.sessions, [{ session_id: 'sess', trace_count: 1, total_tokens: 40 }]);
});

/** A local OTLP/HTTP receiver decoding the JSON payload the exporter sends. */
async function receiver() {
  const spans: Array<{ name: string; traceId: string; attributes: Record<string, unknown> }> = [];
  const flat = (v: Record<string, unknown>): unknown =>
    v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? v.arrayValue));
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === '/v1/traces' && String(req.headers['content-type']).includes('json')) {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              name: s.name,
              traceId: s.traceId,
              attributes: Object.fromEntries(
                (s.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [
                  a.key,
                  flat(a.value),
                ]),
              ),
            });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => server.close() };
}

t.test('OTLP/HTTP export: a local receiver gets the spans with GenAI attributes', async (t) => {
  const rx = await receiver();
  t.teardown(rx.close);
  const p = await make(() => openStore({ backend: 'memory' }), { otlp_endpoint: rx.url, otlp_delay_ms: 10 })();
  t.teardown(() => p.close());
  const id = randomUUID();
  await p.ingestTrace({
    trace_id: id,
    name: 'agent:helper',
    session_id: 's',
    metadata: { agent_name: 'helper', model: 'gpt-x' },
    spans: [
      {
        name: 'turn 1',
        metadata: { type: 'generation', model: 'gpt-x' },
        usage: { input_tokens: 7, output_tokens: 3 },
      },
      { name: 'search', metadata: { type: 'tool', call_id: 'c1' } },
    ],
  });
  await p.flush!();
  t.equal(rx.spans.length, 3, 'the trace and its two spans');
  const byName = Object.fromEntries(rx.spans.map((s) => [s.name, s]));
  t.match(byName['agent:helper']?.attributes, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'helper',
    'session.id': 's',
    'switchboard.trace_id': id,
  });
  t.match(byName['chat gpt-x']?.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-x',
    'gen_ai.usage.input_tokens': 7,
    'gen_ai.usage.output_tokens': 3,
  });
  t.match(byName['execute_tool search']?.attributes, { 'gen_ai.tool.name': 'search', 'gen_ai.tool.call.id': 'c1' });
  t.ok(
    rx.spans.every((s) => s.traceId === id.replace(/-/g, '')),
    'every span carries the Switchboard trace id as its OTel trace id',
  );
  t.match(p.exportStats(), { exported: 3, dropped: 0 });
});

t.test('OTLP export with a dead collector: ingest still answers, the bounded queue drops and counts', async (t) => {
  const p = await make(() => openStore({ backend: 'memory' }), {
    otlp_endpoint: 'http://127.0.0.1:9', // discard port: nothing listens
    otlp_max_queue_size: 4,
    otlp_delay_ms: 60_000,
    otlp_timeout_ms: 500,
  })();
  t.teardown(() => p.close());
  for (let i = 0; i < 5; i++) await p.ingestTrace({ trace_id: `d${i}`, spans: [{ name: 'x' }] });
  t.equal((await p.listTraces!({ limit: 50, offset: 0 })).total, 5, 'every trace stored');
  // 10 spans, a queue of 4, and the first batch stuck on the dead collector: some must be dropped, and counted.
  const stats = p.exportStats()!;
  t.ok(stats.dropped > 0 && stats.dropped <= 6, `drops counted (${stats.dropped})`);
  t.equal(stats.dropped % 2, 0, 'a trace that does not fit is dropped whole (root and span), never half exported');
  t.equal(stats.exported, 0, 'nothing reached a collector');
});

t.test(
  'OTLP export to a collector that never answers: spans waiting in an export count against the queue',
  async (t) => {
    // Accepts connections and never answers, as a hung collector: each export waits for its timeout.
    const sockets = new Set<Socket>();
    const hung = createNetServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const p = await make(() => openStore({ backend: 'memory' }), {
      otlp_endpoint: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
      otlp_max_queue_size: 4,
      otlp_batch_size: 2,
      otlp_delay_ms: 60_000,
      otlp_timeout_ms: 3_000, // far longer than the ten ingests take; bounds what close() waits for
    })();
    t.teardown(async () => {
      for (const s of sockets) s.destroy();
      hung.close();
      await p.close();
    });
    for (let i = 0; i < 10; i++) await p.ingestTrace({ trace_id: `h${i}`, spans: [{ name: 'x' }] });
    // Trace 0 goes out in an export that hangs, trace 1 waits in the queue behind it: 4 spans unanswered, the
    // queue's size. Counting only the queue, the first export's spans looked gone and a third trace was taken.
    t.match(p.exportStats(), { dropped: 16, exported: 0 }, 'the 8 traces after the first two are dropped whole');
    t.equal((await p.listTraces!({ limit: 50, offset: 0 })).total, 10, 'every trace stored');
  },
);

t.test('OTEL_EXPORTER_OTLP_ENDPOINT turns export on when the instance has no otlp_endpoint', async (t) => {
  const rx = await receiver();
  t.teardown(rx.close);
  const before = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = rx.url;
  t.teardown(() => {
    if (before === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = before;
  });
  const p = await make(() => openStore({ backend: 'memory' }))();
  t.teardown(() => p.close());
  await p.ingestTrace({ name: 'from-env' });
  await p.flush!();
  t.same(
    rx.spans.map((s) => s.name),
    ['from-env'],
  );
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const quiet = await make(() => openStore({ backend: 'memory' }))();
  t.teardown(() => quiet.close());
  t.equal(quiet.exportStats(), undefined, 'no endpoint anywhere: no exporter at all');
});

// Write-behind (write-behind.ts): an ingest queues the record and returns; a flusher writes it.

/** Polls until `ok` holds (no timing assertion: the test only fails if it never holds). */
async function until(ok: () => boolean, what: string, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

t.test('write-behind: a trace written and read back at once is there (get, list, sessions, generations)', async (t) => {
  // A delay far beyond the test: nothing reaches the store unless a read flushes it.
  const p = await make(() => openStore({ backend: 'sqlite', dataDir: tempDir() }), { write_delay_ms: 600_000 })();
  t.teardown(() => p.close());
  const { trace_id } = await p.ingestTrace({
    name: 'now',
    session_id: 's1',
    spans: [{ name: 'llm', metadata: { type: 'generation', model: 'm' }, usage: { total_tokens: 7 } }],
  } as never);
  t.equal(p.writeStats().queued, 1, 'queued, not yet written');
  t.equal((await p.getTrace!(trace_id))?.name, 'now', 'get answers from the queue');
  await p.updateTrace!(trace_id, { tags: ['x'] });
  t.same((await p.getTrace!(trace_id))?.tags, ['x'], 'an update of a queued trace replaces it');
  const list = await p.listTraces!({ limit: 10, offset: 0 });
  t.same(
    list.traces.map((x) => x.trace_id),
    [trace_id],
    'list sees it',
  );
  t.equal(p.writeStats().written, 1, 'the list flushed it: one record written (the update coalesced)');
  t.equal((await p.listSessions!({ limit: 10, offset: 0 })).sessions[0]?.total_tokens, 7);
  t.equal((await p.listGenerations!({ limit: 10, offset: 0 })).generations.length, 1);
  const score = await p.ingestScore!({ trace_id, name: 'q', value: 1, data_type: 'NUMERIC' } as never);
  t.equal((await p.getScore!(score.score_id))?.value, 1, 'a queued score reads back');
  t.ok(await p.deleteScore!(score.score_id), 'and deletes (flushed first, so it cannot land after the delete)');
  t.equal(await p.getScore!(score.score_id), undefined);
});

t.test('write-behind: the timer writes on its own; a full queue drops and counts, never waits', async (t) => {
  const p = await make(() => openStore({ backend: 'memory' }), { write_delay_ms: 10 })();
  t.teardown(() => p.close());
  await p.ingestTrace({ name: 'a' });
  await until(() => p.writeStats().written === 1, 'timer flush');
  t.equal(p.writeStats().queued, 0);

  const small = await make(() => openStore({ backend: 'memory' }), { write_delay_ms: 600_000, write_queue_size: 2 })();
  t.teardown(() => small.close());
  for (const name of ['a', 'b', 'c']) await small.ingestTrace({ name });
  t.match(small.writeStats(), { queued: 2, dropped: 1, written: 0 });
  t.equal((await small.listTraces!({ limit: 10, offset: 0 })).total, 2, 'the two queued ones are kept');
});

t.test('write-behind: close() flushes, so a trace written just before a restart is there after it', async (t) => {
  const dataDir = tempDir();
  const s1 = await openStore({ backend: 'sqlite', dataDir });
  const p1 = await storeObservability.create('restart', { sweep_interval_ms: 0, write_delay_ms: 600_000 }, ctx(s1));
  const { trace_id } = await p1.ingestTrace({ name: 'last words' });
  await p1.close();
  await s1.close();
  const s2 = await openStore({ backend: 'sqlite', dataDir });
  const p2 = await storeObservability.create('restart', { sweep_interval_ms: 0 }, ctx(s2));
  t.teardown(async () => {
    await p2.close();
    await s2.close();
  });
  t.equal((await p2.getTrace!(trace_id))?.name, 'last words');
});

t.test(
  'write-behind: Redis down during a flush keeps the batch for the retries, then writes it when back',
  async (t) => {
    let redis = await startRedis();
    const port = redis.port;
    t.teardown(() => redis.stop());
    const store = await openStore({ backend: 'redis', url: redis.url });
    const p = await storeObservability.create(
      'outage',
      { sweep_interval_ms: 0, write_delay_ms: 20, write_retries: 100 },
      ctx(store),
    );
    t.teardown(async () => {
      await p.close();
      await store.close();
    });
    redis.stop();
    const { trace_id } = await p.ingestTrace({ name: 'during outage' });
    t.equal((await p.getTrace!(trace_id))?.name, 'during outage', 'readable from the queue while the store is down');
    await t.rejects(
      p.listTraces!({ limit: 10, offset: 0 }),
      { statusCode: 503, code: 'SB_ERR_STORE_UNAVAILABLE' },
      "a scan during the outage is the store's 503, not a list without the queued trace",
    );
    t.equal(p.writeStats().written, 0);
    t.equal(p.writeStats().queued, 1, 'kept for retry');
    redis = await startRedis(port);
    await until(() => p.writeStats().written === 1, 'retry after Redis came back');
    t.same(
      (await p.listTraces!({ limit: 10, offset: 0 })).traces.map((x) => x.trace_id),
      [trace_id],
    );
    t.equal(p.writeStats().failed, 0);
  },
);

t.test('write-behind: a store that stays down drops the batch after the retries and counts it', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const store = await openStore({ backend: 'redis', url: redis.url });
  const p = await storeObservability.create(
    'down',
    { sweep_interval_ms: 0, write_delay_ms: 5, write_retries: 2 },
    ctx(store),
  );
  t.teardown(async () => {
    await p.close();
    await store.close();
  });
  redis.stop();
  await p.ingestTrace({ name: 'lost' });
  await p.ingestLog!({ message: 'lost too', level: 'info', metadata: {} });
  await until(() => p.writeStats().failed === 2, 'dropped after 2 retries');
  t.match(p.writeStats(), { queued: 0, written: 0, failed: 2 });
});

t.test(
  'write-behind: flush() writes all that was queued before it, after a failed batch and with writes arriving',
  async (t) => {
    const store = await openStore({ backend: 'memory' });
    t.teardown(() => store.close());
    const a = store.collection<Stored<{ timestamp: string }>>('a');
    const real = store.collection<Stored<{ timestamp: string }>>('b');
    // A collection whose first write fails, as a store that blips.
    let failing = 1;
    const b = {
      set: async (k: string, v: Stored<{ timestamp: string }>) => {
        if (failing-- > 0) throw new Error('store blip');
        await real.set(k, v);
      },
    } as unknown as Collection<Stored<{ timestamp: string }>>;
    const wb = new WriteBehind({ maxQueue: 100, batchSize: 2, delayMs: 600_000, maxRetries: 3 }, undefined);
    const rec = () => wrap({ timestamp: new Date().toISOString() });
    wb.enqueue(a, 'a1', rec());
    wb.enqueue(b, 'b1', rec());
    wb.enqueue(a, 'a2', rec());
    wb.enqueue(b, 'b2', rec());
    await t.rejects(wb.flush(), /store blip/, 'a read meets the store error');
    t.equal(await real.get('b1'), undefined, 'b1 failed');
    t.ok(wb.peek(b, 'b1'), 'and is back in the queue, still readable');
    for (let i = 3; i < 9; i++) wb.enqueue(a, `a${i}`, rec()); // queued after: may wait for the timer
    await wb.flush();
    t.ok(await real.get('b1'), 'b1 written by the second flush');
    t.ok(await real.get('b2'), 'b2 written by the second flush');
    t.ok(await a.get('a2'));
    await wb.close();
    t.match(wb.writeStats(), { written: 10, queued: 0, failed: 0, dropped: 0 }, 'close wrote the rest');
  },
);

t.test('write-behind: a collection with setMany gets one call per batch, written whole or retried whole', async (t) => {
  const store = await openStore({ backend: 'memory' });
  t.teardown(() => store.close());
  const real = store.collection<Stored<{ timestamp: string }>>('many');
  const calls: string[][] = [];
  let failing = 1;
  const col = {
    set: async () => {
      throw new Error('set is not used where setMany exists');
    },
    setMany: async (entries: Array<{ key: string; value: Stored<{ timestamp: string }> }>) => {
      calls.push(entries.map((e) => e.key));
      if (failing-- > 0) throw new Error('store blip');
      for (const e of entries) await real.set(e.key, e.value);
    },
  } as unknown as Collection<Stored<{ timestamp: string }>>;
  const wb = new WriteBehind({ maxQueue: 100, batchSize: 3, delayMs: 600_000, maxRetries: 3 }, undefined);
  const rec = () => wrap({ timestamp: new Date().toISOString() });
  wb.enqueue(col, 'k0', rec());
  wb.enqueue(col, 'k1', rec());
  await t.rejects(wb.flush(), /store blip/, 'a read meets the store error');
  t.equal(await real.get('k0'), undefined, 'nothing of the failed batch is written');
  t.ok(wb.peek(col, 'k0') && wb.peek(col, 'k1'), 'all of it is back in the queue, still readable');
  t.equal(wb.writeStats().written, 0);
  await wb.flush();
  t.ok((await real.get('k0')) && (await real.get('k1')), 'the retry writes the batch');
  for (let i = 2; i < 7; i++) wb.enqueue(col, `k${i}`, rec()); // the third fills a batch: written at once
  await wb.flush();
  await wb.close();
  t.same(
    calls,
    [
      ['k0', 'k1'],
      ['k0', 'k1'],
      ['k2', 'k3', 'k4'],
      ['k5', 'k6'],
    ],
    'one call per batch, in queue order',
  );
  t.match(wb.writeStats(), { written: 7, queued: 0, failed: 0, dropped: 0 });
});

t.test(
  'write-behind: a value queued unmade is made once, when its batch is written or when a read comes first',
  async (t) => {
    const store = await openStore({ backend: 'memory' });
    t.teardown(() => store.close());
    const col = store.collection<Stored<{ timestamp: string; n: number }>>('lazy');
    const made: string[] = [];
    const maker = (key: string, n: number) => () => {
      made.push(key);
      return wrap({ timestamp: new Date().toISOString(), n });
    };
    const wb = new WriteBehind({ maxQueue: 100, batchSize: 10, delayMs: 600_000, maxRetries: 3 }, undefined);
    wb.enqueue(col, 'k1', maker('k1', 1));
    wb.enqueue(col, 'k2', maker('k2', 2));
    t.same(made, [], 'nothing is made when queued');
    t.match(JSON.parse(wb.peek(col, 'k2')!.j), { n: 2 }, 'a read makes the value it asks for');
    t.same(made, ['k2']);
    wb.enqueue(col, 'k3', () => {
      throw new Error('cannot serialise');
    });
    t.equal(wb.peek(col, 'k3'), undefined, 'a value that cannot be made reads as absent');
    await wb.flush();
    t.same(made, ['k2', 'k1'], 'the batch made the rest; k2 was not made twice');
    t.match(JSON.parse((await col.get('k1'))!.j), { n: 1 }, 'written');
    t.match(JSON.parse((await col.get('k2'))!.j), { n: 2 }, 'written');
    t.equal(await col.get('k3'), undefined, 'the record that could not be made is not written');
    t.match(wb.writeStats(), { written: 2, failed: 1, queued: 0 }, 'it is counted as failed, and the batch went on');
    await wb.close();
  },
);

t.test('ingest: the id and time are fixed at the call; a listener hears each trace at once', async (t) => {
  const s = await openStore({ backend: 'memory' });
  const p = await storeObservability.create('lazy-ingest', { sweep_interval_ms: 0, write_delay_ms: 600_000 }, ctx(s));
  t.teardown(async () => {
    await p.close!();
    await s.close();
  });
  // No listener: the record is made later, from what the call fixed.
  const before = new Date().toISOString();
  const { trace_id } = await p.ingestTrace!({ name: 'lazy', spans: [] });
  const after = new Date().toISOString();
  const got = await p.getTrace!(trace_id);
  t.equal(got?.trace_id, trace_id, 'read back before any write');
  t.ok(got!.timestamp >= before && got!.timestamp <= after, 'stamped at the call, not at the read');
  await t.rejects(
    p.ingestTrace!({ name: 'bad', timestamp: 'not a time' }),
    RangeError,
    'a bad time fails the call that gave it, not a later batch',
  );
  // With a listener (online evaluation): told at once, not when the batch is written.
  const heard: string[] = [];
  p.onTrace!((tr) => heard.push(tr.name));
  await p.ingestTrace!({ name: 'heard', spans: [] });
  await new Promise((r) => setImmediate(r));
  t.same(heard, ['heard'], 'the listener heard it before any write');
  await p.flush!();
  t.same(heard, ['heard'], 'and only once');
  t.match(p.writeStats(), { written: 2, failed: 0 }, 'nothing was queued for the bad one');
});

t.test(
  'on a SQLite core store, records live in observability.db beside it, written by the writer thread',
  async (t) => {
    const dataDir = tempDir();
    const core = await openStore({ backend: 'sqlite', dataDir });
    const p = await storeObservability.create('own', { sweep_interval_ms: 0 }, ctx(core));
    t.teardown(async () => {
      await p.close();
      await core.close();
    });
    const { trace_id } = await p.ingestTrace({
      name: 'in its own file',
      spans: [{ name: 's', metadata: { type: 'tool' } }],
    });
    const log = await p.ingestLog!({ message: 'hello', trace_id, level: 'info', metadata: {} });
    await p.flush!();
    t.match(p.writeStats(), { written: 2, failed: 0, queued: 0 });
    const own = new Database(join(dataDir, 'observability.db'), { readonly: true });
    t.teardown(() => own.close());
    const keys = own.prepare('SELECT key FROM keyv ORDER BY key').all() as Array<{ key: string }>;
    t.same(
      keys.map((r) => r.key),
      [`observability%3Aown%3Alogs:${log.log_id}`, `observability%3Aown%3Atraces:${trace_id}`],
      'both records are in the own file, under the keys the collections read',
    );
    const coreDb = new Database(join(dataDir, 'switchboard.db'), { readonly: true });
    t.teardown(() => coreDb.close());
    t.equal(
      (coreDb.prepare("SELECT count(*) AS n FROM keyv WHERE key LIKE 'observability%'").get() as { n: number }).n,
      0,
      'none in the core file',
    );
    t.equal((await p.getTrace!(trace_id))?.name, 'in its own file', 'read back through the collection');
    t.equal((await p.listLogs!({ trace_id, limit: 10, offset: 0 })).logs[0]?.message, 'hello', 'and listed');
  },
);

t.test(
  'records an earlier version kept in the core file move to the own file at start, and are not lost',
  async (t) => {
    const dataDir = tempDir();
    const core = await openStore({ backend: 'sqlite', dataDir });
    t.teardown(() => core.close());
    // What the provider wrote before it had a file of its own: its collections in the core store.
    const old = await storeObservability.create('moved', { sweep_interval_ms: 0, own_file: false }, ctx(core));
    const ids: string[] = [];
    for (let i = 0; i < 1203; i++) ids.push((await old.ingestTrace({ name: `old ${i}`, session_id: 'sess' })).trace_id);
    await old.ingestScore!({ trace_id: ids[0]!, name: 'kept', value: 1, data_type: 'NUMERIC', metadata: {} });
    await old.close();
    const inCore = async () => {
      let n = 0;
      for await (const _ of core.collection('observability:moved:traces').entries()) n++;
      return n;
    };
    t.equal(await inCore(), 1203, 'the old version wrote into the core file');
    const p = await storeObservability.create('moved', { sweep_interval_ms: 0 }, ctx(core));
    t.teardown(() => p.close());
    t.equal(await inCore(), 0, 'moved out of the core file');
    t.equal((await p.getTrace!(ids[1202]!))?.name, 'old 1202', 'readable where they are now');
    t.equal((await p.listTraces!({ limit: 5, offset: 0 })).total, 1203, 'every trace is there');
    t.equal((await p.listScores!({ limit: 5, offset: 0 })).scores[0]?.name, 'kept', 'scores too');
    t.equal((await p.getSession!('sess'))?.session.trace_count, 1203, 'sessions count the moved traces');
  },
);

t.test('ids: UUIDv7 from the pooled random bytes, unique past a pool refill, ordered by time', async (t) => {
  const ids = Array.from({ length: 1000 }, (_, i) => timeOrderedId(1_700_000_000_000 + i));
  t.equal(new Set(ids).size, 1000, 'no id repeats (the pool holds 256, so it was refilled)');
  t.ok(
    ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
    'version 7, RFC variant',
  );
  t.same([...ids].sort(), ids, 'later time sorts later');
  const tails = new Set(ids.map((id) => id.slice(-12)));
  t.equal(tails.size, 1000, 'random tails differ');
});
