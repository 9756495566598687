import { join } from 'node:path';
import Keyv from 'keyv';
import { unavailable } from './errors.ts';
import type { Health } from './health.ts';
import type { Collection, Store, StoreBackend } from './store-types.ts';
import { DEFAULT_COMMAND_TIMEOUT_MS, withDeadline, withinDeadline } from './store-deadline.ts';
import { MemoryCollection, type MemoryValues } from './store-memory.ts';
import { NotACounter, serialising, UnstorableValue, unstorableError } from './store-value.ts';
import { SqliteFile, SqliteKeyvAdapter } from './store-sqlite.ts';

export type { Collection, Store, StoreBackend } from './store-types.ts';

export interface StoreOptions {
  backend: StoreBackend;
  /** sqlite: the directory that holds `switchboard.db`. */
  dataDir?: string;
  /** sqlite: another file name in `dataDir` (a provider's own database beside the core one). */
  file?: string;
  /** redis: `redis://...` */
  url?: string;
  /** memory: copy values per read (default) or share deep-frozen ones (core/store-memory.ts). */
  memoryValues?: MemoryValues;
  /** redis: the most a store call may wait for an answer before it is a 503 (core/store-deadline.ts). */
  commandTimeoutMs?: number;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}

/** The read-and-write steps keyv has no atomic form of, done by the backend itself on keyv's prefixed keys and envelope. */
export interface Atomics {
  /** Insert an already serialised keyv entry unless a live one holds the key. */
  insertIfAbsent(prefixedKey: string, serialized: string, ttlMs: number | undefined): Promise<boolean>;
  /** Add one to the counter in the entry (`{"value":n}`) and return the new value. */
  increment(prefixedKey: string): Promise<number>;
}

class KeyvCollection<T> implements Collection<T> {
  constructor(
    private readonly kv: Keyv,
    private readonly storeName: string,
    private readonly atomics: Atomics,
  ) {
    // keyv serialises inside set(): its failures are marked so fail() can tell them from the backend's.
    if (kv.serialize) kv.serialize = serialising(kv.serialize);
  }

  private fail(op: string, err: unknown): never {
    // A value that cannot be written is the caller's problem, whatever the backend's health (store-value.ts).
    if (err instanceof UnstorableValue) throw unstorableError(this.storeName, err);
    if (err instanceof NotACounter) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw unavailable('SB_ERR_STORE_UNAVAILABLE', `Store '${this.storeName}' is unavailable (${op}): ${reason}`, err);
  }

  async get(key: string): Promise<T | undefined> {
    try {
      return (await this.kv.get<T>(key)) ?? undefined;
    } catch (err) {
      this.fail('get', err);
    }
  }

  async getMany(keys: string[]): Promise<Array<T | undefined>> {
    if (keys.length === 0) return [];
    try {
      const values = (await this.kv.get<T>(keys)) as Array<T | undefined>;
      return values.map((v) => v ?? undefined);
    } catch (err) {
      this.fail('get', err);
    }
  }

  async set(key: string, value: T, ttlMs?: number): Promise<void> {
    try {
      const ok = await this.kv.set(key, value, ttlMs);
      if (ok === false) throw new Error('write was not acknowledged');
    } catch (err) {
      this.fail('set', err);
    }
  }

  async setMany(entries: Array<{ key: string; value: T }>): Promise<void> {
    if (entries.length === 0) return;
    try {
      // keyv serialises each entry and hands the adapter one call (SqliteKeyvAdapter.setMany: one transaction).
      const ok = (await this.kv.setMany(entries)) as unknown;
      if (Array.isArray(ok) && ok.includes(false)) throw new Error('write was not acknowledged');
    } catch (err) {
      this.fail('set', err);
    }
  }

  async setIfAbsent(key: string, value: T, ttlMs?: number): Promise<boolean> {
    try {
      // keyv's own envelope and key prefix, so get() reads the entry like any other.
      const data = await this.kv.serializeData({ value, expires: ttlMs ? Date.now() + ttlMs : undefined });
      return await this.atomics.insertIfAbsent(
        this.kv._getKeyPrefix(key),
        typeof data === 'string' ? data : JSON.stringify(data),
        ttlMs || undefined,
      );
    } catch (err) {
      this.fail('set', err);
    }
  }

  async increment(key: string): Promise<number> {
    try {
      return await this.atomics.increment(this.kv._getKeyPrefix(key));
    } catch (err) {
      this.fail('increment', err);
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      return await this.kv.delete(key);
    } catch (err) {
      this.fail('delete', err);
    }
  }

  async *entries(): AsyncIterable<[string, T]> {
    if (!this.kv.iterator)
      throw unavailable('SB_ERR_STORE_UNAVAILABLE', `Store '${this.storeName}' cannot list entries`);
    try {
      for await (const [key, value] of this.kv.iterator(undefined)) yield [key as string, value as T];
    } catch (err) {
      this.fail('list', err);
    }
  }

  async clear(): Promise<void> {
    // @keyv/redis reports a failed clear only as an 'error' event, so listen
    // for one while clearing: an outage must not look like an empty collection.
    let emitted: unknown;
    const onError = (e: unknown) => (emitted ??= e ?? new Error('clear failed'));
    this.kv.on('error', onError);
    try {
      await this.kv.clear();
    } catch (err) {
      this.fail('clear', err);
    } finally {
      this.kv.off('error', onError);
    }
    if (emitted !== undefined) this.fail('clear', emitted);
  }
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  if (opts.backend === 'redis')
    return withDeadline(
      await openRedisStore(opts.url ?? 'redis://127.0.0.1:6379'),
      opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    );
  if (opts.backend === 'sqlite') return openSqliteStore(join(opts.dataDir ?? 'data', opts.file ?? 'switchboard.db'));
  return openMemoryStore(opts.memoryValues ?? 'copy');
}

/**
 * The keyv namespace of a collection. Keys are stored as `namespace:key`
 * (SQLite, memory) or `namespace::key` (Redis), and listing/clearing works by
 * prefix (a SQLite range, a Redis SCAN MATCH glob). Escaping `:` keeps
 * collection `a` from seeing `a:b`'s keys (and keyv, which unprefixes at the
 * first ':', from leaking part of the name into keys); escaping glob
 * characters keeps a collection named `*` from clearing every other one.
 */
export function keyvNamespace(collection: string): string {
  return collection.replace(/[%:*?[\]\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function makeStore(
  backend: StoreBackend,
  location: string,
  newKeyv: (namespace: string) => { kv: Keyv; atomics: Atomics },
  health: () => Promise<Health>,
  close: () => Promise<void>,
): Store {
  const cache = new Map<string, Collection<unknown>>();
  return {
    backend,
    location,
    collection<T>(name: string): Collection<T> {
      let c = cache.get(name);
      if (!c) {
        const { kv, atomics } = newKeyv(keyvNamespace(name));
        c = new KeyvCollection<unknown>(kv, backend, atomics);
        cache.set(name, c);
      }
      return c as Collection<T>;
    },
    healthcheck: health,
    close,
  };
}

function openSqliteStore(file: string): Store {
  const sqlite = new SqliteFile(file);
  return makeStore(
    'sqlite',
    file,
    (namespace) => ({
      kv: new Keyv({ store: new SqliteKeyvAdapter(sqlite), namespace, throwOnErrors: true }),
      atomics: {
        insertIfAbsent: async (key, serialized) => sqlite.insertIfAbsent(key, serialized),
        increment: async (key) => sqlite.increment(key),
      },
    }),
    async () => {
      try {
        sqlite.db.prepare('SELECT 1').get();
        return 'ok';
      } catch {
        return 'down';
      }
    },
    async () => sqlite.close(),
  );
}

/** Maps in the process, without keyv (core/store-memory.ts); nothing can be down. */
function openMemoryStore(mode: MemoryValues): Store {
  const collections = new Map<string, MemoryCollection<unknown>>();
  return {
    backend: 'memory',
    location: 'memory',
    collection<T>(name: string): Collection<T> {
      let c = collections.get(name);
      if (!c) collections.set(name, (c = new MemoryCollection<unknown>(mode)));
      return c as Collection<T>;
    },
    healthcheck: async () => 'ok',
    close: async () => {
      for (const c of collections.values()) await c.clear();
    },
  };
}

/**
 * INCR on keyv's JSON envelope: a bare INCR would store `5`, which keyv's get()
 * cannot read, so the script reads the envelope, adds one and writes it back.
 * A script runs alone on the server: two replicas never get the same value.
 * SET without KEEPTTL: a counter has no TTL.
 */
const INCREMENT_ENVELOPE = `
local raw = redis.call('GET', KEYS[1])
local n = 0
if raw then
  local ok, entry = pcall(cjson.decode, raw)
  if not ok or type(entry) ~= 'table' or type(entry.value) ~= 'number' or entry.value ~= math.floor(entry.value) then
    return redis.error_reply('SB_NOT_A_COUNTER')
  end
  n = entry.value
end
n = n + 1
redis.call('SET', KEYS[1], '{"value":' .. string.format('%d', n) .. '}')
return n
`;

async function openRedisStore(url: string): Promise<Store> {
  const { default: KeyvRedis, createClient } = await import('@keyv/redis');
  // One client for every collection; keyv's Redis adapter would otherwise report
  // a miss on outage, so both throw switches are on.
  // disableOfflineQueue: while the connection is down a command fails at once
  // (503) instead of waiting in node-redis's queue until Redis comes back.
  const client = createClient({
    url,
    disableOfflineQueue: true,
    // A frozen Redis keeps the connection open, so commands whose callers already got their 503
    // (core/store-deadline.ts) wait in the client for a reply; the cap keeps that from growing
    // without bound during a long freeze: past it a command fails at once (503).
    commandsQueueMaxLength: 10_000,
    socket: { connectTimeout: 2000, reconnectStrategy: (n: number) => Math.min(n * 100, 2000) },
  });
  client.on('error', () => {
    /* surfaced per call as a 503 */
  });
  // keyv's Redis adapter adds its connect/disconnect/reconnecting/error listeners to the client it is given, one
  // set per collection, and the collections share this client: their number is fixed by the code (tens), not by
  // traffic, so Node's default warning at 11 listeners would only report the design. A real leak still warns.
  (client as unknown as { setMaxListeners(n: number): void }).setMaxListeners(256);
  const location = redactUrl(url);
  try {
    // connect() keeps retrying (reconnectStrategy) while Redis is down; a
    // process that starts during an outage must say so rather than hang.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      client.connect(),
      new Promise((_, rej) => (timer = setTimeout(() => rej(new Error('no answer within 5 s')), 5000))),
    ]).finally(() => clearTimeout(timer));
  } catch (err) {
    // unref: the connect still in progress may open a socket after destroy() (see close below).
    client.unref();
    if (client.isOpen) client.destroy();
    throw unavailable(
      'SB_ERR_STORE_UNAVAILABLE',
      `Store 'redis' at ${location} is unavailable: ${(err as Error).message}`,
      err,
    );
  }
  return makeStore(
    'redis',
    location,
    (namespace) => {
      const adapter = new KeyvRedis(client as never, {
        throwOnConnectError: true,
        throwOnErrors: true,
        namespace,
        connectionTimeout: 2000,
      });
      return {
        kv: new Keyv({ store: adapter, namespace, throwOnErrors: true, useKeyPrefix: false }),
        atomics: {
          // SET NX: Redis decides, so two replicas can never both win.
          insertIfAbsent: async (key, serialized, ttlMs) =>
            (await client.set(
              adapter.createKeyPrefix(key, namespace),
              serialized,
              ttlMs ? { NX: true, PX: ttlMs } : { NX: true },
            )) === 'OK',
          increment: async (key) => {
            const redisKey = adapter.createKeyPrefix(key, namespace);
            try {
              return Number(await client.eval(INCREMENT_ENVELOPE, { keys: [redisKey] }));
            } catch (err) {
              if ((err as Error).message?.includes('SB_NOT_A_COUNTER')) throw new NotACounter(key);
              throw err;
            }
          },
        },
      };
    },
    async () => {
      try {
        if (!client.isReady) return 'down';
        await client.ping();
        return 'ok';
      } catch {
        return 'down';
      }
    },
    async () => {
      // keyv's Redis adapter connects a client that is not open on its next call: a call made after close()
      // (work that outlived its shutdown) reopened the connection, and that socket kept the process alive.
      // A closed store stays closed; such a call fails as any call to an unavailable store does.
      Object.assign(client, { connect: () => Promise.reject(new Error('the store is closed')) });
      if (!client.isOpen) return;
      // A socket node-redis is still connecting when destroy() runs (a reconnect in progress) is not
      // destroyed with the client and would keep the process alive: unref'd, it cannot.
      client.unref();
      // Commands already sent get their replies first (a PING is answered after them), within the
      // command deadline. Not client.close(): once it has started, a destroy() throws "The client
      // is closed" and leaves the socket open until a frozen Redis answers, so a shutdown hung.
      if (client.isReady)
        await withinDeadline(client.ping(), DEFAULT_COMMAND_TIMEOUT_MS, () => new Error('')).catch(() => {});
      if (client.isOpen) client.destroy();
    },
  );
}
