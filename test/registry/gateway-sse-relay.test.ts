import t from 'tap';
import { forbidden } from '../../core/errors.ts';
import { openPubSub } from '../../core/pubsub.ts';
import { SseRelay, type RelayedPost } from '../../plugins/registry/gateway/sse-relay.ts';
import { startRedis } from '../fixtures/redis-server.ts';

/**
 * The legacy-SSE relay between two replicas, each with its own pub/sub
 * connections to a private redis-server: the holder's answer and refusals
 * come back to the asker, a session nobody holds is undefined after the
 * acknowledgement wait, and a holder that never answers is a 502.
 * (The whole path through nginx and the SDK: test/cluster/sse-gateway.test.ts.)
 */

t.test('relay between two replicas over Redis pub/sub', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const [a, b] = await Promise.all([openPubSub(redis.url), openPubSub(redis.url)]);
  t.teardown(() => Promise.all([a!.close(), b!.close()]));

  const seen: RelayedPost[] = [];
  const holder = new SseRelay(
    a!,
    (sid) => sid === 'held' || sid === 'refused' || sid === 'silent',
    async (post) => {
      seen.push(post);
      if (post.sid === 'refused')
        throw forbidden('SB_ERR_GATEWAY_SESSION_OWNER', 'This SSE session belongs to another caller');
      if (post.sid === 'silent') await new Promise((r) => setTimeout(r, 5000));
      return { status: 202, text: `accepted ${JSON.stringify(post.body)}` };
    },
    1000,
    500,
  );
  const asker = new SseRelay(
    b!,
    () => false,
    async () => ({ status: 500, text: 'never' }),
    1000,
    500,
  );
  t.teardown(() => Promise.all([holder.close(), asker.close()]));
  // Subscriptions are sent as the clients connect: wait until a relayed post gets through.
  const post = (sid: string): RelayedPost => ({
    sid,
    server: 'everything',
    owner: 'alice',
    headers: { 'mcp-protocol-version': '2024-11-05' },
    body: { jsonrpc: '2.0', id: 7, method: 'tools/list' },
  });
  let answer: Awaited<ReturnType<SseRelay['forward']>>;
  for (let i = 0; i < 50 && !answer; i++) answer = await asker.forward(post('held'));

  t.same(
    answer,
    { status: 202, text: 'accepted {"jsonrpc":"2.0","id":7,"method":"tools/list"}' },
    "the holder's answer",
  );
  t.same(seen.at(-1), post('held'), 'the holder got the body, headers, owner and server as sent');
  await t.rejects(
    asker.forward(post('refused')),
    { statusCode: 403, code: 'SB_ERR_GATEWAY_SESSION_OWNER' },
    "the holder's refusal comes back as that error",
  );
  t.equal(await asker.forward(post('nobody')), undefined, 'a session no replica holds: undefined (the route says 404)');
  await t.rejects(
    asker.forward(post('silent')),
    { statusCode: 502, code: 'SB_ERR_GATEWAY_RELAY_TIMEOUT' },
    'acknowledged but never answered: 502',
  );
});
