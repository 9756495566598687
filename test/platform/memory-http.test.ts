import t from 'tap';
import { openStore } from '../../core/store.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { HEADER_AUTH } from '../agents/helpers.ts';

t.test('noop mode: store, retrieve, list, search and delete through HTTP', async (t) => {
  const app = await makeApp(t);
  const put = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes',
    payload: { key: 'greeting', content: 'hello world', metadata: { lang: 'en' } },
  });
  t.equal(put.statusCode, 201);
  t.match(put.json(), { namespace: 'notes', key: 'greeting', content: 'hello world', metadata: { lang: 'en' } });
  t.match((await app.inject({ method: 'GET', url: '/api/v1/memory/notes/greeting' })).json(), {
    content: 'hello world',
  });
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes',
    payload: { key: 'farewell', content: 'goodbye moon' },
  });
  const list = await app.inject({ method: 'GET', url: '/api/v1/memory/notes?limit=1&offset=0' });
  t.equal(list.json().total, 2);
  t.equal(list.json().records.length, 1);
  const search = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes/search',
    payload: { query: 'moon', top_k: 5 },
  });
  t.equal(search.json().results[0].record.key, 'farewell');
  t.same((await app.inject({ method: 'GET', url: '/api/v1/memory/namespaces' })).json(), { namespaces: ['notes'] });
  t.equal((await app.inject({ method: 'DELETE', url: '/api/v1/memory/notes/greeting' })).statusCode, 204);
  const gone = await app.inject({ method: 'GET', url: '/api/v1/memory/notes/greeting' });
  t.equal(gone.statusCode, 404);
  t.match(gone.json(), { code: 'SB_ERR_MEMORY_NOT_FOUND', detail: /greeting/ });
  const bad = await app.inject({ method: 'POST', url: '/api/v1/memory/notes', payload: { content: 'no key' } });
  t.equal(bad.statusCode, 422);
  t.match(bad.json().detail, [{ loc: ['body', 'key'] }]);
  for (const metadata of ['a string', ['a', 'list'], 42]) {
    const notObject = await app.inject({
      method: 'POST',
      url: '/api/v1/memory/notes',
      payload: { key: 'm', content: 'x', metadata },
    });
    t.equal(notObject.statusCode, 422, `metadata ${JSON.stringify(metadata)} is refused: it must be an object`);
    t.match(notObject.json().detail, [{ loc: ['body', 'metadata'] }]);
  }
  const nested = {
    tags: ['a', 'b'],
    source: { url: 'https://example.test/x?a="q"', n: 1.5 },
    flag: null,
    'odd key\n"': true,
  };
  const stored = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes',
    payload: { key: 'nested', content: 'x', metadata: nested },
  });
  t.same(stored.json().metadata, nested, 'any JSON object goes in');
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/notes/nested' })).json().metadata,
    nested,
    'and comes back as it went in',
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/memory/notes/search', payload: { query: '  ' } })).statusCode,
    400,
  );
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/v1/memory/resources', payload: { key: 'x', content: 'y' } }))
      .statusCode,
    422,
    'reserved names route elsewhere',
  );
});

t.test('X-Provider-Memory chooses the provider per request', async (t) => {
  const app = await makeApp(t);
  const h = (p: string) => ({ 'x-provider-memory': p });
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/ns',
    headers: h('keyv'),
    payload: { key: 'k', content: 'durable' },
  });
  t.equal((await app.inject({ method: 'GET', url: '/api/v1/memory/ns/k', headers: h('keyv') })).statusCode, 200);
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/ns/k' })).statusCode,
    404,
    'the default in_memory provider has its own records',
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/ns/k', headers: { 'x-provider': 'keyv' } })).statusCode,
    200,
    'X-Provider applies too',
  );
  const unknown = await app.inject({ method: 'GET', url: '/api/v1/memory/ns/k', headers: h('nope') });
  t.equal(unknown.statusCode, 400);
  t.equal(unknown.json().detail, "Unknown memory provider 'nope'. Available: in_memory, keyv");
});

t.test('records in the durable provider survive a restart', async (t) => {
  const dir = tempDir();
  const config = { providers: { memory: { default: 'durable', instances: { durable: { type: 'keyv' } } } } };
  const s1 = await openStore({ backend: 'sqlite', dataDir: dir });
  const a1 = await makeApp({ teardown: () => {} }, config, { store: s1, env: { DATA_DIR: dir } });
  await a1.inject({ method: 'POST', url: '/api/v1/memory/keep', payload: { key: 'fact', content: 'the sky is blue' } });
  await a1.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/ann/s1/events',
    payload: { messages: [{ role: 'user', text: 'hi' }] },
  });
  await a1.close();
  await s1.close();
  const s2 = await openStore({ backend: 'sqlite', dataDir: dir });
  t.teardown(() => s2.close());
  const a2 = await makeApp(t, config, { store: s2, env: { DATA_DIR: dir } });
  t.match((await a2.inject({ method: 'GET', url: '/api/v1/memory/keep/fact' })).json(), { content: 'the sky is blue' });
  t.equal(
    (await a2.inject({ method: 'POST', url: '/api/v1/memory/keep/search', payload: { query: 'sky' } })).json()
      .results[0].record.key,
    'fact',
  );
  t.equal((await a2.inject({ method: 'GET', url: '/api/v1/memory/sessions/ann/s1/events' })).json().events.length, 1);
});

t.test('the metadata denylist strips listed keys on every read path, not on write', async (t) => {
  const app = await makeApp(t, { metadata_denylists: { memory: ['secret', 'internal'] } });
  const meta = { secret: 's3', internal: { a: 1 }, keep: 'yes' };
  const put = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/d',
    payload: { key: 'k', content: 'denylist test', metadata: meta },
  });
  t.same(put.json().metadata, { keep: 'yes' });
  const reads = [
    (await app.inject({ method: 'GET', url: '/api/v1/memory/d/k' })).json().metadata,
    (await app.inject({ method: 'GET', url: '/api/v1/memory/d' })).json().records[0].metadata,
    (await app.inject({ method: 'POST', url: '/api/v1/memory/d/search', payload: { query: 'denylist' } })).json()
      .results[0].record.metadata,
  ];
  for (const m of reads) t.same(m, { keep: 'yes' });
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/a/s/events',
    payload: { messages: [{ role: 'user', text: 'x' }], metadata: meta },
  });
  t.same((await app.inject({ method: 'GET', url: '/api/v1/memory/sessions/a/s/events' })).json().events[0].metadata, {
    keep: 'yes',
  });
  // The store keeps what was written: another app without the denylist sees every key.
  const m = app.sb.providers.get('memory') as unknown as {
    retrieve: (ns: string, k: string) => Promise<{ metadata: unknown }>;
  };
  t.same((await m.retrieve('d', 'k')).metadata, meta);
});

t.test('a record read again is written from the serialiser memo, and a change is never served stale', async (t) => {
  // in_memory hands out the same deep-frozen record to every reader (plugins/ops/serialize-memo.ts).
  const app = await makeApp(t);
  const get = () => app.inject({ method: 'GET', url: '/api/v1/memory/memo/k' });
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/memo',
    payload: { key: 'k', content: 'first', metadata: { v: 1 } },
  });
  const a = await get();
  const b = await get();
  t.equal(a.body, b.body, 'the same bytes twice');
  t.match(a.json(), { content: 'first', metadata: { v: 1 } });
  t.equal(a.headers['content-length'], String(Buffer.byteLength(a.body)));
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/memo',
    payload: { key: 'k', content: 'second', metadata: { v: 2 } },
  });
  t.match((await get()).json(), { content: 'second', metadata: { v: 2 } }, 'an overwrite is seen at once');
  await app.inject({ method: 'DELETE', url: '/api/v1/memory/memo/k' });
  t.equal((await get()).statusCode, 404, 'a delete too');
  // Non-ASCII content: the memo keeps text, and the length is counted in bytes each time.
  await app.inject({ method: 'POST', url: '/api/v1/memory/memo', payload: { key: 'k', content: 'grüße 👋' } });
  for (let i = 0; i < 2; i++) {
    const r = await get();
    t.equal(r.json().content, 'grüße 👋');
    t.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
  }
  // With a denylist every read is a fresh stripped copy, never the memo of the stored record.
  const strict = await makeApp(t, { metadata_denylists: { memory: ['secret'] } });
  await strict.inject({
    method: 'POST',
    url: '/api/v1/memory/memo',
    payload: { key: 'k', content: 'c', metadata: { secret: 's', keep: 1 } },
  });
  for (let i = 0; i < 2; i++)
    t.same((await strict.inject({ method: 'GET', url: '/api/v1/memory/memo/k' })).json().metadata, { keep: 1 });
});

t.test('conversations, branches and resources through HTTP', async (t) => {
  const app = await makeApp(t);
  const ev = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/bob/s1/events',
    payload: { messages: [{ role: 'user', text: 'one' }] },
  });
  t.equal(ev.statusCode, 201);
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/bob/s1/events',
    payload: { messages: [{ role: 'user', text: 'two' }] },
  });
  const root = ev.json().event_id;
  t.match((await app.inject({ method: 'GET', url: `/api/v1/memory/sessions/bob/s1/events/${root}` })).json(), {
    messages: [{ text: 'one' }],
  });
  t.same((await app.inject({ method: 'GET', url: '/api/v1/memory/sessions/bob/s1/turns?k=1' })).json(), {
    turns: [{ messages: [{ role: 'user', text: 'two' }] }],
  });
  t.same((await app.inject({ method: 'GET', url: '/api/v1/memory/actors' })).json(), { actors: [{ actor_id: 'bob' }] });
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/actors/bob/sessions' })).json().sessions[0].message_count,
    2,
  );
  const br = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/bob/s1/branches',
    payload: { name: 'what-if', root_event_id: root, messages: [{ role: 'user', text: 'other' }] },
  });
  t.equal(br.statusCode, 201);
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/sessions/bob/s1/events?branch=what-if' }))
      .json()
      .events.map((e: { messages: Array<{ text: string }> }) => e.messages[0].text),
    ['one', 'other'],
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/sessions/bob/s1/branches' })).json().branches.length,
    1,
  );
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/memory/sessions/bob/s1/branches',
        payload: { name: 'x', root_event_id: 'nope' },
      })
    ).statusCode,
    404,
  );
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/resources',
    payload: { name: 'kb', strategies: [{ name: 'facts', type: 'semantic', namespaces: ['f'], config: {} }] },
  });
  t.equal(res.statusCode, 201);
  const id = res.json().memory_id;
  t.equal(
    (await app.inject({ method: 'GET', url: `/api/v1/memory/resources/${id}/strategies` })).json().strategies.length,
    1,
  );
  const st = await app.inject({
    method: 'POST',
    url: `/api/v1/memory/resources/${id}/strategies`,
    payload: { name: 'sum', type: 'summary', namespaces: [], config: {} },
  });
  t.equal(
    (await app.inject({ method: 'DELETE', url: `/api/v1/memory/resources/${id}/strategies/${st.json().strategy_id}` }))
      .statusCode,
    204,
  );
  t.equal((await app.inject({ method: 'DELETE', url: `/api/v1/memory/resources/${id}` })).statusCode, 204);
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/memory/resources/${id}` })).statusCode, 404);
});

t.test('user namespaces and conversations belong to their user', async (t) => {
  const app = await makeApp(t, {
    provider_packages: [HEADER_AUTH],
    providers: { auth: { default: 'test_header', instances: { test_header: { type: 'test_header' } } } },
  });
  const as = (id: string, admin = false) => ({ 'x-test-user': id, 'x-test-admin': String(admin) });
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: '/api/v1/memory/user:alice',
        headers: as('alice'),
        payload: { key: 'k', content: 'mine' },
      })
    ).statusCode,
    201,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/user:alice/k', headers: as('alice') })).statusCode,
    200,
  );
  const denied = await app.inject({ method: 'GET', url: '/api/v1/memory/user:alice/k', headers: as('mallory') });
  t.equal(denied.statusCode, 403);
  t.match(denied.json(), { code: 'SB_ERR_MEMORY_NAMESPACE_FORBIDDEN' });
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/user:alice/k', headers: as('root', true) })).statusCode,
    200,
    'admins read every namespace',
  );
  t.same(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/namespaces', headers: as('mallory') })).json().namespaces,
    [],
    "others' private namespaces are not listed",
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/sessions/alice/s/events', headers: as('mallory') }))
      .statusCode,
    403,
  );
  t.equal(
    (await app.inject({ method: 'GET', url: '/api/v1/memory/notes/x' })).statusCode,
    401,
    'no credentials, no memory',
  );
});
