import t from 'tap';
import { MintLimiter } from '../../plugins/registry/auth/mint-limit.ts';
import { redisReplicas } from '../fixtures/redis-server.ts';

/**
 * The token-mint limit is exact across replicas: two limiters on two Redis
 * connections (as two replicas hold them) take 40 mints for one user at once,
 * and exactly the limit of them pass. A read-modify-write count would let
 * several through on the same count.
 */

t.test('concurrent mints on two replicas: exactly the limit passes', async (t) => {
  const stores = await redisReplicas(t, 'redis://127.0.0.1:6379', ['registry_token_mint_slots']);
  if (!stores) return;
  const [a, b] = stores.map((s) => new MintLimiter(s, 10));
  const user = `mint-${Date.now().toString(36)}`;
  const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b)!.take(user)));
  const passed = results.filter((r) => r.status === 'fulfilled').length;
  const refused = results.filter(
    (r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'SB_ERR_TOKEN_RATE_LIMIT',
  ).length;
  t.equal(passed, 10, 'exactly 10 of 40 concurrent mints pass');
  t.equal(refused, 30, 'the other 30 are 429 SB_ERR_TOKEN_RATE_LIMIT');
  t.equal(await a!.take(`${user}-other`).then(() => 'ok'), 'ok', 'another user has slots of their own');
});
