import { randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import { openStore, type Store } from '../../core/store.ts';
import { keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { tempDir } from '../helpers/app.ts';

/**
 * Two replicas of the durable provider on one Redis (two processes' worth of
 * state: separate store connections, separate in-process search indexes). A
 * replica must never answer from an index that misses the other's writes.
 */
async function replica(name: string): Promise<{ m: MemoryProvider; store: Store }> {
  const store = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  const m = (await keyvMemory.create(
    name,
    {},
    { store, logger: pino({ level: 'silent' }), dataDir: tempDir(), lookup: () => undefined },
  )) as MemoryProvider;
  return { m, store };
}

t.test('two replicas sharing Redis keep their search indexes current', async (t) => {
  const name = `replicas-${randomUUID()}`;
  const a = await replica(name);
  const b = await replica(name);
  t.teardown(async () => {
    const { createClient } = await import('@keyv/redis');
    const c = createClient({ url: 'redis://127.0.0.1:6379' });
    await c.connect();
    for await (const keys of c.scanIterator({ MATCH: `*memory:${name}*`, COUNT: 500 }))
      if (keys.length) await c.del(keys);
    await c.quit();
    await a.store.close();
    await b.store.close();
  });
  const keys = async (m: MemoryProvider, q: string) =>
    (await m.search('kb', { query: q, top_k: 10 })).map((h) => h.record.key).sort();

  await a.m.store('kb', { key: 'apples', content: 'apples grow in the orchard' });
  t.same(await keys(a.m, 'orchard'), ['apples'], 'A builds its index');
  t.same(await keys(b.m, 'orchard'), ['apples'], 'B builds its own from the store');

  await b.m.store('kb', { key: 'pears', content: 'pears also grow in the orchard' });
  t.same(await keys(a.m, 'orchard'), ['apples', 'pears'], "A sees B's write on its next search");

  // B writes, then A writes before searching: A's own write must not make its stale index look current.
  await b.m.store('kb', { key: 'plums', content: 'plums ripen in the orchard late' });
  await a.m.store('kb', { key: 'cherries', content: 'cherries blossom in the orchard' });
  t.same(
    await keys(a.m, 'orchard'),
    ['apples', 'cherries', 'pears', 'plums'],
    "A's index has B's plums after A's own write",
  );
  t.same(await keys(b.m, 'orchard'), ['apples', 'cherries', 'pears', 'plums'], "B's index has A's cherries");

  await a.m.delete('kb', 'pears');
  t.same(await keys(b.m, 'orchard'), ['apples', 'cherries', 'plums'], "B drops A's delete");
  t.equal((await b.m.list('kb', { limit: 10, offset: 0 })).total, 3, 'list agrees');
});
