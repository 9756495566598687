import t from 'tap';
import { ExpiringLru } from '../../plugins/registry/auth/lru.ts';
import { TokenCache } from '../../plugins/registry/auth/token-cache.ts';

t.test('verified-token cache: kept until expiry, bounded, least recently used evicted first', async (t) => {
  const lru = new ExpiringLru<string>(4);
  const now = 1_000_000;
  lru.set('a', 'A', now + 1000);
  t.equal(lru.get('a', now + 999), 'A', 'kept until it expires');
  t.equal(lru.get('a', now + 1000), undefined, 'gone at its expiry');
  t.equal(lru.size, 0, 'and removed');

  for (const k of ['a', 'b', 'c', 'd']) lru.set(k, k.toUpperCase(), now + 10_000);
  // 'a' is the oldest; using it makes it recent, so 'b' goes first.
  t.equal(lru.get('a', now), 'A');
  lru.set('e', 'E', now + 10_000);
  t.equal(lru.size, 4, 'bounded');
  t.equal(lru.get('b', now), undefined, 'the least recently used entry was evicted');
  t.equal(lru.get('a', now), 'A', 'the recently used one was kept');

  // An entry used over and over stays while many others come and go.
  const big = new ExpiringLru<number>(100);
  big.set('hot', 1, now + 10_000);
  for (let i = 0; i < 1000; i++) {
    big.set(`k${i}`, i, now + 10_000);
    t.equal(big.get('hot', now), 1, `hot entry kept after ${i + 1} insertions`);
  }
  t.equal(big.size, 100);
});

t.test('token cache: keyed by the token tail, but only the very same token gets an entry back', async (t) => {
  const cache = new TokenCache<string>(10);
  const now = 1_000_000;
  const tail = 'S'.repeat(40); // two tokens with the same signature part and different payloads
  const alice = `header.${'a'.repeat(200)}.${tail}`;
  const mallory = `header.${'m'.repeat(200)}.${tail}`;
  cache.set(alice, 'alice', now + 1000);
  t.equal(cache.get(alice, now), 'alice', 'the cached token is found');
  t.equal(
    cache.get(`${alice}`.slice(0), now),
    'alice',
    'from another string with the same text (each header is a new string)',
  );
  t.equal(cache.get(mallory, now), undefined, 'a token that only shares the tail is a miss, not alice');
  cache.set(mallory, 'mallory', now + 1000);
  t.equal(cache.get(mallory, now), 'mallory');
  t.equal(
    cache.get(alice, now),
    undefined,
    'they take turns in the slot: alice is verified again, never answered as mallory',
  );
  t.equal(cache.get(alice, now + 1000), undefined, 'expiry still applies');
  const short = 'opaque-short-token';
  cache.set(short, 'short', now + 1000);
  t.equal(cache.get(short, now), 'short', 'short tokens are keyed whole');
  t.equal(cache.get('opaque-short-tokeN', now), undefined);
});
