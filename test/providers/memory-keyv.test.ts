import t from 'tap';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { openStore, type Store } from '../../core/store.ts';
import type { MemoryProvider } from '../../core/primitives/memory.ts';
import type { ProviderContext } from '../../core/provider.ts';
import { inMemoryMemory, keyvMemory } from '../../providers/keyv/memory-provider.ts';
import { memoryConformance } from '../conformance/memory.ts';
import { tempDir } from '../helpers/app.ts';

// Three providers through the whole suite: over a minute when the machine is loaded.
t.setTimeout(900_000);

const ctx = (store: Store): ProviderContext => ({
  store,
  logger: pino({ level: 'silent' }),
  dataDir: tempDir(),
  lookup: () => undefined,
});

t.test('in_memory passes the memory conformance suite', (t) =>
  memoryConformance(t, {
    make: async () =>
      (await inMemoryMemory.create('in_memory', {}, ctx(await openStore({ backend: 'memory' })))) as MemoryProvider,
  }),
);

t.test('keyv on SQLite passes the memory conformance suite', (t) =>
  memoryConformance(t, {
    make: async () => {
      const store = await openStore({ backend: 'sqlite', dataDir: tempDir() });
      const m = (await keyvMemory.create('durable', {}, ctx(store))) as MemoryProvider;
      return Object.assign(Object.create(m), { close: async () => store.close() }) as MemoryProvider;
    },
  }),
);

t.test('keyv on Redis passes the memory conformance suite', (t) =>
  memoryConformance(t, {
    make: async () => {
      const store = await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
      // A fresh instance name per case keeps runs apart on the shared server; cleared afterwards.
      const name = `conf-${randomUUID()}`;
      const m = (await keyvMemory.create(name, {}, ctx(store))) as MemoryProvider;
      return Object.assign(Object.create(m), {
        close: async () => {
          const { createClient } = await import('@keyv/redis');
          const c = createClient({ url: 'redis://127.0.0.1:6379' });
          await c.connect();
          for await (const keys of c.scanIterator({ MATCH: `*memory:${name}*`, COUNT: 500 }))
            if (keys.length) await c.del(keys);
          await c.quit();
          await store.close();
        },
      }) as MemoryProvider;
    },
  }),
);
