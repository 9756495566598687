import type { ObservabilityProvider } from '../../core/primitives/observability.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

/** Case names, so a provider's test can skip them by name with a reason. */
export const OBSERVABILITY_CASES = {
  ingest: 'ingestTrace answers the trace id (given or generated)',
  readBack: 'an ingested trace reads back with all its fields',
  replace: 're-ingesting a trace id replaces the trace',
  listFilters: 'trace list filters by user, session, name and tag, newest first, with total',
  logs: 'logs: ingest and list filtered by trace and level',
  generations: 'generations: ingest and list filtered by trace',
  scores: 'trace scores: ingest and list filtered by trace and name',
  sessions: 'sessions are derived from traces with a session_id',
  sessionsPerUser: "a session id reused by two users: the user filter counts only that user's traces",
  unsupported: 'capabilities declared false have no method or reject with 501',
} as const;

const status = (err: unknown) => (err as { statusCode?: number }).statusCode;

/** The observability suite: every observability provider runs it with its own runner and named skips. */
export async function observabilitySuite(t: Runner, opts: SuiteOptions<ObservabilityProvider>): Promise<void> {
  const run = caseRunner(t, opts);

  await run(OBSERVABILITY_CASES.ingest, async (t, p) => {
    const given = await p.ingestTrace({ trace_id: 'conf-trace-1', name: 'chat' });
    t.same(given, { trace_id: 'conf-trace-1', status: 'accepted' });
    const generated = await p.ingestTrace({ name: 'chat' });
    t.ok(generated.trace_id.length > 0, 'an id is generated when absent');
    t.not(generated.trace_id, 'conf-trace-1');
  });

  await run(OBSERVABILITY_CASES.readBack, async (t, p) => {
    const full = {
      trace_id: 'conf-full',
      name: 'agent:helper',
      user_id: 'alice',
      session_id: 'sess-1',
      input: 'hello',
      output: { text: 'hi' },
      tags: ['agent', 'test'],
      spans: [{ name: 'llm', input: 'hello', output: 'hi', metadata: { model: 'm' } }],
      metadata: { turns: 1 },
    };
    await p.ingestTrace(full);
    const got = await p.getTrace!('conf-full');
    t.match(got, full);
    t.ok(got && !Number.isNaN(Date.parse(got.timestamp)), 'timestamp set');
    t.equal(await p.getTrace!('nope'), undefined, 'unknown trace is undefined');
  });

  await run(OBSERVABILITY_CASES.replace, async (t, p) => {
    await p.ingestTrace({ trace_id: 'r', name: 'first', output: 'a' });
    await p.ingestTrace({ trace_id: 'r', name: 'second', output: 'b' });
    t.match(await p.getTrace!('r'), { name: 'second', output: 'b' });
    t.equal((await p.listTraces!({ limit: 50, offset: 0 })).total, 1, 'still one trace');
  });

  await run(OBSERVABILITY_CASES.listFilters, async (t, p) => {
    await p.ingestTrace({
      trace_id: 't1',
      name: 'a',
      user_id: 'alice',
      session_id: 's1',
      tags: ['x'],
      timestamp: '2026-01-01T00:00:01.000Z',
    });
    await p.ingestTrace({
      trace_id: 't2',
      name: 'b',
      user_id: 'bob',
      session_id: 's2',
      tags: ['y'],
      timestamp: '2026-01-01T00:00:02.000Z',
    });
    await p.ingestTrace({
      trace_id: 't3',
      name: 'a',
      user_id: 'alice',
      session_id: 's1',
      tags: ['x', 'y'],
      timestamp: '2026-01-01T00:00:03.000Z',
    });
    const ids = async (q: Record<string, string>) =>
      (await p.listTraces!({ limit: 50, offset: 0, ...q })).traces.map((x) => x.trace_id);
    t.same(await ids({}), ['t3', 't2', 't1'], 'newest first');
    t.same(await ids({ user_id: 'alice' }), ['t3', 't1']);
    t.same(await ids({ session_id: 's2' }), ['t2']);
    t.same(await ids({ name: 'a' }), ['t3', 't1']);
    t.same(await ids({ tag: 'y' }), ['t3', 't2']);
    const page = await p.listTraces!({ limit: 1, offset: 1 });
    t.same(
      page.traces.map((x) => x.trace_id),
      ['t2'],
      'offset and limit',
    );
    t.equal(page.total, 3, 'total counts every match');
  });

  await run(OBSERVABILITY_CASES.logs, async (t, p) => {
    const a = await p.ingestLog!({ message: 'started', level: 'info', trace_id: 'lt', metadata: {} });
    await p.ingestLog!({ message: 'boom', level: 'error', trace_id: 'lt', metadata: { code: 1 } });
    await p.ingestLog!({ message: 'other', level: 'info', metadata: {} });
    t.ok(a.log_id.length > 0);
    const forTrace = await p.listLogs!({ trace_id: 'lt', limit: 50, offset: 0 });
    t.equal(forTrace.total, 2);
    t.same(
      forTrace.logs.map((l) => l.message),
      ['boom', 'started'],
      'newest first',
    );
    t.same(
      (await p.listLogs!({ level: 'error', limit: 50, offset: 0 })).logs.map((l) => l.message),
      ['boom'],
    );
  });

  await run(OBSERVABILITY_CASES.generations, async (t, p) => {
    const g = await p.ingestGeneration!({
      trace_id: 'gt',
      name: 'llm',
      model: 'm1',
      input: 'q',
      output: 'a',
      usage: { prompt_tokens: 3, completion_tokens: 5 },
      metadata: {},
    });
    await p.ingestGeneration!({ trace_id: 'other', name: 'llm', metadata: {} });
    const list = await p.listGenerations!({ trace_id: 'gt', limit: 50, offset: 0 });
    t.equal(list.total, 1);
    t.match(list.generations[0], {
      generation_id: g.generation_id,
      trace_id: 'gt',
      model: 'm1',
      usage: { prompt_tokens: 3, completion_tokens: 5 },
    });
  });

  await run(OBSERVABILITY_CASES.scores, async (t, p) => {
    const s = await p.ingestScore!({ trace_id: 'st', name: 'helpful', value: 1, data_type: 'BOOLEAN', metadata: {} });
    await p.ingestScore!({ trace_id: 'st', name: 'tone', value: 'warm', data_type: 'CATEGORICAL', metadata: {} });
    await p.ingestScore!({ trace_id: 'elsewhere', name: 'helpful', value: 0, metadata: {} });
    t.equal((await p.listScores!({ trace_id: 'st', limit: 50, offset: 0 })).total, 2);
    const helpful = await p.listScores!({ trace_id: 'st', name: 'helpful', limit: 50, offset: 0 });
    t.match(helpful.scores, [{ score_id: s.score_id, value: 1, data_type: 'BOOLEAN' }]);
  });

  await run(OBSERVABILITY_CASES.sessions, async (t, p) => {
    await p.ingestTrace({ trace_id: 'a1', session_id: 'sa', user_id: 'alice', timestamp: '2026-01-01T00:00:01.000Z' });
    await p.ingestTrace({ trace_id: 'a2', session_id: 'sa', user_id: 'alice', timestamp: '2026-01-01T00:00:05.000Z' });
    await p.ingestTrace({ trace_id: 'b1', session_id: 'sb', user_id: 'bob', timestamp: '2026-01-01T00:00:03.000Z' });
    await p.ingestTrace({ trace_id: 'n1' });
    const list = await p.listSessions!({ limit: 50, offset: 0 });
    t.same(
      list.sessions.map((s) => s.session_id),
      ['sa', 'sb'],
      'most recent activity first; traces without a session are not sessions',
    );
    t.match(list.sessions[0], {
      trace_count: 2,
      user_id: 'alice',
      first_seen: '2026-01-01T00:00:01.000Z',
      last_activity: '2026-01-01T00:00:05.000Z',
    });
    t.same(
      (await p.listSessions!({ user_id: 'bob', limit: 50, offset: 0 })).sessions.map((s) => s.session_id),
      ['sb'],
    );
    const detail = await p.getSession!('sa');
    t.same(
      detail?.traces.map((x) => x.trace_id),
      ['a2', 'a1'],
    );
    t.equal(await p.getSession!('nope'), undefined);
  });

  await run(OBSERVABILITY_CASES.sessionsPerUser, async (t, p) => {
    await p.ingestTrace({
      trace_id: 'u1',
      session_id: 'same',
      user_id: 'alice',
      timestamp: '2026-01-01T00:00:01.000Z',
    });
    await p.ingestTrace({ trace_id: 'u2', session_id: 'same', user_id: 'bob', timestamp: '2026-01-01T00:00:09.000Z' });
    const alice = await p.listSessions!({ user_id: 'alice', limit: 50, offset: 0 });
    t.match(alice.sessions, [
      { session_id: 'same', user_id: 'alice', trace_count: 1, last_activity: '2026-01-01T00:00:01.000Z' },
    ]);
    t.equal(
      (await p.listSessions!({ limit: 50, offset: 0 })).sessions[0]?.trace_count,
      2,
      'unfiltered, both traces count',
    );
  });

  await run(OBSERVABILITY_CASES.unsupported, async (t, p) => {
    const caps = p.capabilities;
    for (const c of ['ingest', 'query', 'logs', 'generations', 'scores', 'sessions'])
      t.equal(typeof caps[c], 'boolean', `${c} capability declared`);
    const optional: Array<[string, (() => Promise<unknown>) | undefined]> = [];
    if (!caps.query) optional.push(['listTraces', p.listTraces && (() => p.listTraces!({ limit: 1, offset: 0 }))]);
    if (!caps.logs)
      optional.push(['ingestLog', p.ingestLog && (() => p.ingestLog!({ message: 'x', level: 'info', metadata: {} }))]);
    if (!caps.generations)
      optional.push([
        'ingestGeneration',
        p.ingestGeneration && (() => p.ingestGeneration!({ trace_id: 't', name: 'g', metadata: {} })),
      ]);
    if (!caps.scores)
      optional.push([
        'ingestScore',
        p.ingestScore && (() => p.ingestScore!({ trace_id: 't', name: 's', value: 1, metadata: {} })),
      ]);
    if (!caps.sessions)
      optional.push(['listSessions', p.listSessions && (() => p.listSessions!({ limit: 1, offset: 0 }))]);
    for (const [method, call] of optional) {
      if (call)
        t.equal(
          status(
            await call().then(
              () => undefined,
              (err: unknown) => err,
            ),
          ),
          501,
          `${method} rejects with 501`,
        );
      else t.equal((p as unknown as Record<string, unknown>)[method], undefined, `${method} is absent`);
    }
  });
}
