import t from 'tap';
import { catalogOf } from '../../plugins/registry/catalog/context.ts';
import type { ServerRecord } from '../../plugins/registry/catalog/records.ts';
import { discoveryFor } from '../../plugins/registry/discovery/lifecycle.ts';
import { makeApp } from '../helpers/app.ts';
import { asUser } from '../helpers/registry-auth.ts';
import { entities } from './discovery-fixture.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** Enough that the build is tens of slices or more (~4,000 docs, some 0.3 s of CPU on an idle core). */
const SERVERS = 1_000;

/**
 * The index build runs in slices that yield to the event loop: a registry
 * with thousands of servers answers /healthz while it builds, and a search
 * sent during the build waits for it and ranks the whole catalog (the record
 * it needs is the last one the build reaches). A build that held the loop
 * would go from 'idle' to 'ready' with nothing answered in between.
 *
 * The records are written after the app is ready, so the build starts at the
 * first search (the path an empty registry takes) rather than at start: the
 * same build (Discovery.start), but the test decides when it begins instead of
 * racing the app's own start-up.
 */
t.test('a large index builds in slices: /healthz answers during the build, a search waits for it', async (t) => {
  const app = await makeApp(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: { ...FORM, ...admin },
    payload: new URLSearchParams({
      name: 'Template',
      description: 'template',
      path: '/template',
      proxy_pass_url: 'http://127.0.0.1:9/',
    }).toString(),
  });
  t.equal(reg.statusCode, 201, reg.body);
  const servers = catalogOf(app).servers;
  const template = servers.get('/template')!;
  let docs = 2; // the needle and its tool
  // The development set's servers recombined with a serial, as the bench does: terms repeat as in a real catalog.
  for (let i = 0; i < SERVERS; i++) {
    const a = entities.servers[i % entities.servers.length]!;
    const r: ServerRecord = {
      ...template,
      path: `${a.path}-${i}`,
      server_name: `${a.server_name} ${i}`,
      description: a.description,
      tags: a.tags,
      tools: a.tools.map((x) => ({ ...x, name: `${x.name}_${i}` })),
    } as ServerRecord;
    await servers.index.set(r.path, r);
    docs += 1 + r.tools.length;
  }
  // Sorted last by path, so the build reaches it last: a search ranked against half an index would miss it.
  const needle: ServerRecord = {
    ...template,
    path: '/zz-kombucha',
    server_name: 'Kombucha Brewing Log',
    description: 'Track kombucha fermentation batches, scoby health and second fermentation flavours',
    tags: ['kombucha', 'brewing'],
    tools: [{ name: 'log_batch', description: 'Record a kombucha fermentation batch' }],
  } as ServerRecord;
  await servers.index.set(needle.path, needle);

  const discovery = discoveryFor(catalogOf(app), {});
  t.equal(discovery.state, 'idle', 'nobody has searched yet: no index');

  let searchDone = false;
  const searching = app
    .inject({
      method: 'POST',
      url: '/api/search/semantic',
      headers: admin,
      payload: { query: 'kombucha fermentation', entity_types: ['mcp_server'] },
    })
    .finally(() => {
      searchDone = true;
    });
  // The search's auth runs first; the build starts when its handler asks for the index, reads the word vectors,
  // then indexes the records: wait until some are in, so what follows happens between two slices of that.
  while (discovery.indexed === 0 && discovery.state !== 'ready') await new Promise((r) => setImmediate(r));
  t.equal(discovery.state, 'building', 'the search started the build, which is indexing the records');
  t.ok(discovery.indexed < docs, `it is part way: ${discovery.indexed} of ${docs + 1} docs in`);
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  t.equal(health.statusCode, 200, health.body);
  t.equal(discovery.state, 'building', '/healthz answered while the index was still being built');
  t.notOk(searchDone, 'the search sent before it is still waiting for the build');

  const found = await searching;
  t.equal(found.statusCode, 200, found.body);
  t.equal(discovery.state, 'ready', 'the search answered once the build was done');
  const body = found.json();
  t.equal(body.search_mode, 'hybrid');
  t.equal(body.servers[0]?.path, '/zz-kombucha', 'the record the build reached last is found');
  t.equal(discovery.longestSliceMs > 0, true, 'the build yielded at least once');
});
