import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
import pino from 'pino';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { openStore } from '../../core/store.ts';
import { jsonFileMemory } from '../../examples/memory-provider/json-file-memory.ts';
import { memoryConformance } from '../conformance/memory.ts';
import { makeApp, tempDir } from '../helpers/app.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../examples/memory-provider');

t.test('the example json_file provider passes the memory conformance suite', async (t) => {
  const store = await openStore({ backend: 'memory' });
  await memoryConformance(t, {
    make: async () =>
      (await jsonFileMemory.create(
        'json_file',
        {},
        { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
      )) as MemoryProvider,
    skip: [
      {
        reason:
          'the example declares resources: false to show how a provider leaves a capability out (the HTTP layer answers 501)',
        tests: ['memory resources and their strategies'],
      },
    ],
  });
});

t.test('listed in provider_packages: discovered, selectable with X-Provider-Memory, durable in its file', async (t) => {
  const dataDir = tempDir();
  const config = { provider_packages: [EXAMPLE] };
  const h = { 'x-provider-memory': 'json_file' };
  let app = await makeApp(t, config, { env: { DATA_DIR: dataDir } });

  const listing = (await app.inject({ url: '/api/v1/providers' })).json();
  t.ok(listing.memory.available.includes('json_file'), 'the example is an available memory provider');
  t.equal(listing.memory.default, 'in_memory', 'listing a package does not change the default');

  const put = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes',
    headers: h,
    payload: { key: 'tea', content: 'green tea with jasmine', metadata: { drink: true } },
  });
  t.equal(put.statusCode, 201);
  await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes',
    headers: h,
    payload: { key: 'coffee', content: 'black coffee, no sugar' },
  });
  t.equal(
    (await app.inject({ url: '/api/v1/memory/notes/tea' })).statusCode,
    404,
    'without the header the default provider answers',
  );
  const search = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/notes/search',
    headers: h,
    payload: { query: 'jasmine tea', top_k: 1 },
  });
  t.equal(search.json().results[0].record.key, 'tea');

  const ev = await app.inject({
    method: 'POST',
    url: '/api/v1/memory/sessions/ann/s1/events',
    headers: h,
    payload: { messages: [{ role: 'user', text: 'hi' }] },
  });
  t.equal(ev.statusCode, 201);
  const resources = await app.inject({ url: '/api/v1/memory/resources', headers: h });
  t.equal(resources.statusCode, 501, 'a capability the provider does not declare is 501 before it is called');
  t.match(resources.json().detail, /json_file/);

  const file = JSON.parse(readFileSync(join(dataDir, 'memory-json_file.json'), 'utf8'));
  t.equal(file.records.notes.tea.content, 'green tea with jasmine', 'the record is in the JSON file under DATA_DIR');

  await app.close();
  app = await makeApp(t, config, { env: { DATA_DIR: dataDir } });
  const again = await app.inject({ url: '/api/v1/memory/notes/tea', headers: h });
  t.equal(again.statusCode, 200, 'records survive a restart');
  t.same(again.json().metadata, { drink: true });
  t.same(
    (await app.inject({ url: '/api/v1/memory/sessions/ann/s1/events', headers: h }))
      .json()
      .events.map((e: { messages: Array<{ text: string }> }) => e.messages[0].text),
    ['hi'],
    'and so do events',
  );
});
