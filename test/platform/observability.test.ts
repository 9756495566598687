import t from 'tap';
import type { ObservabilityProvider } from '../../core/primitives/observability.ts';
import { ALICE_BOB_ROOT, apiKeyUsers, keyHeader as as } from '../fixtures/api-key-users.ts';
import { writeProviderPackage } from '../fixtures/provider-package.ts';
import { makeApp } from '../helpers/app.ts';

/** An export-only observability package: it accepts traces but cannot read anything back. */
function exportOnlyPackage(): string {
  return writeProviderPackage({
    name: 'fixture-export-only',
    provides: ['observability'],
    source: `export const sent = [];
export const providers = [{
  type: 'export_only', kind: 'observability',
  create: (name) => ({
    name, type: 'export_only', kind: 'observability',
    capabilities: { ingest: true, query: false, logs: false, generations: false, scores: false, sessions: false },
    async ingestTrace(trace) { const id = trace.trace_id ?? 'exported-' + sent.length; sent.push(id); return { trace_id: id, status: 'accepted' }; },
    healthcheck: async () => 'ok', close: async () => {},
  }),
}];\n`,
  });
}

const O = '/api/v1/observability';

t.test('noop mode: a trace ingested (202) reads back, in lists and sessions', async (t) => {
  const app = await makeApp(t);
  const trace = {
    trace_id: 'tr-1',
    name: 'agent:helper',
    user_id: 'alice',
    session_id: 'sess-1',
    input: 'hello',
    output: 'hi there',
    tags: ['agent'],
    spans: [{ name: 'llm', input: 'hello', output: 'hi there', metadata: { model: 'm' } }],
    metadata: { turns: 1 },
  };
  const posted = await app.inject({ method: 'POST', url: `${O}/traces`, payload: trace });
  t.equal(posted.statusCode, 202);
  t.same(posted.json(), { trace_id: 'tr-1', status: 'accepted' });
  const generated = await app.inject({ method: 'POST', url: `${O}/traces`, payload: { name: 'bare' } });
  t.equal(generated.statusCode, 202);
  t.match(generated.json(), { trace_id: /^[0-9a-f-]{36}$/ });

  const got = await app.inject({ method: 'GET', url: `${O}/traces/tr-1` });
  t.equal(got.statusCode, 200);
  t.match(got.json(), { ...trace, timestamp: /T/ });

  const list = (await app.inject({ method: 'GET', url: `${O}/traces?user_id=alice` })).json();
  t.equal(list.total, 1);
  t.equal(list.traces[0].trace_id, 'tr-1');
  t.equal((await app.inject({ method: 'GET', url: `${O}/traces?limit=1` })).json().traces.length, 1);
  t.equal((await app.inject({ method: 'GET', url: `${O}/traces?tag=agent` })).json().total, 1);

  const sessions = (await app.inject({ method: 'GET', url: `${O}/sessions` })).json();
  t.match(sessions, { total: 1, sessions: [{ session_id: 'sess-1', user_id: 'alice', trace_count: 1 }] });
  const session = await app.inject({ method: 'GET', url: `${O}/sessions/sess-1` });
  t.equal(session.statusCode, 200);
  t.same(
    session.json().traces.map((x: { trace_id: string }) => x.trace_id),
    ['tr-1'],
  );

  const missing = await app.inject({ method: 'GET', url: `${O}/traces/nope` });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'SB_ERR_OBSERVABILITY_TRACE_NOT_FOUND');
  t.equal((await app.inject({ method: 'GET', url: `${O}/sessions/nope` })).statusCode, 404);
});

t.test('noop mode: logs, generations and scores ingest (202) and list back', async (t) => {
  const app = await makeApp(t);
  const log = await app.inject({
    method: 'POST',
    url: `${O}/logs`,
    payload: { message: 'tool failed', level: 'error', trace_id: 'tr-9', metadata: { tool: 'x' } },
  });
  t.equal(log.statusCode, 202);
  t.match(log.json(), { log_id: /./, status: 'accepted' });
  await app.inject({ method: 'POST', url: `${O}/logs`, payload: { message: 'hello' } });
  t.match((await app.inject({ method: 'GET', url: `${O}/logs?trace_id=tr-9` })).json(), {
    total: 1,
    logs: [{ message: 'tool failed', level: 'error', metadata: { tool: 'x' } }],
  });
  t.match((await app.inject({ method: 'GET', url: `${O}/logs?level=info` })).json(), {
    total: 1,
    logs: [{ message: 'hello', trace_id: null }],
  });

  const gen = await app.inject({
    method: 'POST',
    url: `${O}/generations`,
    payload: {
      trace_id: 'tr-9',
      model: 'm1',
      input: 'q',
      output: 'a',
      usage: { prompt_tokens: 2, completion_tokens: 3 },
    },
  });
  t.equal(gen.statusCode, 202);
  t.match((await app.inject({ method: 'GET', url: `${O}/generations?trace_id=tr-9` })).json(), {
    total: 1,
    generations: [
      { generation_id: gen.json().generation_id, model: 'm1', usage: { prompt_tokens: 2, completion_tokens: 3 } },
    ],
  });

  const score = await app.inject({
    method: 'POST',
    url: `${O}/scores`,
    payload: { trace_id: 'tr-9', name: 'helpful', value: 1, data_type: 'BOOLEAN' },
  });
  t.equal(score.statusCode, 202);
  t.match((await app.inject({ method: 'GET', url: `${O}/scores?trace_id=tr-9` })).json(), {
    total: 1,
    scores: [{ score_id: score.json().score_id, name: 'helpful', value: 1 }],
  });
});

t.test('bad input is 422 naming the field', async (t) => {
  const app = await makeApp(t);
  const cases: Array<[string, unknown, string]> = [
    [`${O}/logs`, { level: 'info' }, 'message'],
    [`${O}/logs`, { message: 'x', level: 'loud' }, 'level'],
    [`${O}/generations`, { model: 'm' }, 'trace_id'],
    [`${O}/scores`, { trace_id: 't', name: 'n' }, 'value'],
    [`${O}/traces`, { spans: [{ input: 'a span without a name' }] }, 'spans'],
  ];
  for (const [url, payload, field] of cases) {
    const res = await app.inject({ method: 'POST', url, payload: payload as object });
    t.equal(res.statusCode, 422, `${url} without a good ${field}`);
    t.ok(
      (res.json().detail as Array<{ loc: string[] }>).some((d) => d.loc.includes(field)),
      `detail names ${field}`,
    );
  }
  t.equal((await app.inject({ method: 'GET', url: `${O}/traces?limit=0` })).statusCode, 422);
});

t.test('an export-only provider ingests (202) and every read answers 501 before calling it', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [exportOnlyPackage()],
    providers: {
      observability: { default: 'export', instances: { export: { type: 'export_only' }, noop: { type: 'noop' } } },
    },
  });
  const posted = await app.inject({ method: 'POST', url: `${O}/traces`, payload: { trace_id: 'x1', name: 'n' } });
  t.equal(posted.statusCode, 202);
  t.same(posted.json(), { trace_id: 'x1', status: 'accepted' });
  for (const url of [
    `${O}/traces`,
    `${O}/traces/x1`,
    `${O}/logs`,
    `${O}/generations`,
    `${O}/scores`,
    `${O}/sessions`,
    `${O}/sessions/s`,
  ]) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 501, `GET ${url}`);
    t.match(res.json().detail, /observability provider 'export'.*capability 'query'.*X-Provider-Observability/);
  }
  for (const [url, payload] of [
    [`${O}/logs`, { message: 'm' }],
    [`${O}/generations`, { trace_id: 't' }],
    [`${O}/scores`, { trace_id: 't', name: 'n', value: 1 }],
  ] as const) {
    const res = await app.inject({ method: 'POST', url, payload });
    t.equal(res.statusCode, 501, `POST ${url}`);
    t.equal(res.json().code, 'SB_ERR_CAPABILITY_MISSING');
  }
  const routed = await app.inject({
    method: 'GET',
    url: `${O}/traces`,
    headers: { 'x-provider-observability': 'noop' },
  });
  t.equal(routed.statusCode, 200, 'X-Provider-Observability picks the in-memory provider');
});

t.test('ingestTrace is what auto_trace calls: the trace it takes is readable over HTTP', async (t) => {
  const app = await makeApp(t);
  const provider = app.sb.providers.get<ObservabilityProvider>('observability')!;
  const out = await provider.ingestTrace({
    trace_id: 'run-1',
    name: 'agent:a',
    user_id: 'u',
    session_id: 's',
    input: 'in',
    output: 'out',
    tags: ['agent'],
    spans: [],
    metadata: {},
  });
  t.same(out, { trace_id: 'run-1', status: 'accepted' });
  t.match((await app.inject({ method: 'GET', url: `${O}/traces/run-1` })).json(), { name: 'agent:a', output: 'out' });
});

t.test('with auth on, non-admins read only their own traces and what hangs off them', async (t) => {
  const app = await makeApp(t, apiKeyUsers(ALICE_BOB_ROOT));
  t.equal((await app.inject({ method: 'GET', url: `${O}/traces` })).statusCode, 401);
  for (const [id, user, session] of [
    ['ta', 'alice', 'shared-s'],
    ['tb', 'bob', 'shared-s'],
    ['tb2', 'bob', 'bob-s'],
  ] as const) {
    t.equal(
      (
        await app.inject({
          method: 'POST',
          url: `${O}/traces`,
          headers: as('root'),
          payload: { trace_id: id, user_id: user, session_id: session },
        })
      ).statusCode,
      202,
    );
  }
  await app.inject({
    method: 'POST',
    url: `${O}/logs`,
    headers: as('root'),
    payload: { message: 'bob log', trace_id: 'tb' },
  });

  t.same(
    (await app.inject({ method: 'GET', url: `${O}/traces`, headers: as('alice') }))
      .json()
      .traces.map((x: { trace_id: string }) => x.trace_id),
    ['ta'],
    'alice lists her traces only',
  );
  t.equal(
    (await app.inject({ method: 'GET', url: `${O}/traces`, headers: as('root') })).json().total,
    3,
    'admins list all',
  );
  const other = await app.inject({ method: 'GET', url: `${O}/traces/tb`, headers: as('alice') });
  t.equal(other.statusCode, 403);
  t.equal(other.json().code, 'SB_ERR_OBSERVABILITY_FORBIDDEN');
  t.equal(
    (await app.inject({ method: 'GET', url: `${O}/traces?user_id=bob`, headers: as('alice') })).statusCode,
    403,
    'asking for another user is refused, not silently narrowed',
  );
  t.equal((await app.inject({ method: 'GET', url: `${O}/traces/tb`, headers: as('bob') })).statusCode, 200);

  const sessionsOf = async (key: string) =>
    (await app.inject({ method: 'GET', url: `${O}/sessions`, headers: as(key) }))
      .json()
      .sessions.map((s: { session_id: string; trace_count: number }) => [s.session_id, s.trace_count]);
  t.same(await sessionsOf('alice'), [['shared-s', 1]], "sessions come from the caller's own traces");
  t.same((await sessionsOf('bob')).sort(), [
    ['bob-s', 1],
    ['shared-s', 1],
  ]);
  t.same(
    (await sessionsOf('root')).sort(),
    [
      ['bob-s', 1],
      ['shared-s', 2],
    ],
    'admins see every trace of a session',
  );
  const shared = await app.inject({ method: 'GET', url: `${O}/sessions/shared-s`, headers: as('alice') });
  t.equal(shared.statusCode, 200);
  t.same(
    shared.json().traces.map((x: { trace_id: string }) => x.trace_id),
    ['ta'],
    "another user's traces in a reused session id stay hidden",
  );
  t.equal(shared.json().session.trace_count, 1);
  t.equal((await app.inject({ method: 'GET', url: `${O}/sessions/bob-s`, headers: as('alice') })).statusCode, 403);

  const allLogs = await app.inject({ method: 'GET', url: `${O}/logs`, headers: as('alice') });
  t.equal(allLogs.statusCode, 403, 'non-admins list logs per trace');
  t.match(allLogs.json().detail, /pass trace_id/);
  t.equal((await app.inject({ method: 'GET', url: `${O}/logs?trace_id=tb`, headers: as('alice') })).statusCode, 403);
  t.equal((await app.inject({ method: 'GET', url: `${O}/logs?trace_id=tb`, headers: as('bob') })).json().total, 1);
  t.equal(
    (await app.inject({ method: 'GET', url: `${O}/generations?trace_id=ta`, headers: as('alice') })).statusCode,
    200,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: `${O}/scores?trace_id=nope`, headers: as('alice') })).statusCode,
    404,
  );
});
