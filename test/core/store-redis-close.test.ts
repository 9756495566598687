import t from 'tap';
import type { Socket } from 'node:net';
import { openStore } from '../../core/store.ts';
import { startRedis } from '../fixtures/redis-server.ts';

/**
 * Closing a Redis store must end with its connection gone, whatever Redis does: a socket left open keeps the
 * process alive after everything else has stopped (a test file ran all its subtests, then hung until tap's
 * timeout). Before the fix, close() sent QUIT through node-redis's close(); when no answer came within the
 * command deadline the fallback destroy() threw "The client is closed" and the socket stayed open.
 */

/** Sockets of this process connected to `port`, open or not yet closed. */
const socketsTo = (port: number) =>
  (process as unknown as { _getActiveHandles(): unknown[] })
    ._getActiveHandles()
    .filter((h): h is Socket => (h as { constructor?: { name?: string } })?.constructor?.name === 'Socket')
    .filter((s) => s.remotePort === port && !s.destroyed);

t.test('close() while a command waits on a frozen Redis resolves and drops the connection', async (t) => {
  const redis = await startRedis();
  t.teardown(() => {
    redis.thaw();
    redis.stop();
  });
  const store = await openStore({ backend: 'redis', url: redis.url, commandTimeoutMs: 500 });
  const notes = store.collection<{ text: string }>('notes');
  await notes.set('n', { text: 'x' });
  t.equal(socketsTo(redis.port).length, 1, 'one connection while open');

  redis.freeze();
  const pending = notes.get('n').then(
    () => 'answered',
    () => 'failed',
  );
  // The GET is on the wire (queued in node-redis) before close() starts.
  await new Promise((r) => setTimeout(r, 100));
  const closed = await store.close().then(
    () => 'resolved',
    (err: Error) => `rejected: ${err.message}`,
  );
  t.equal(closed, 'resolved', 'close() does not throw');
  t.equal(await pending, 'failed', 'the waiting command fails rather than hangs');
  // Generous bound: a destroyed socket goes away within a turn or two of the event loop.
  for (let i = 0; i < 100 && socketsTo(redis.port).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(socketsTo(redis.port).length, 0, 'no connection to the frozen Redis is left open');
  t.equal(await store.close().then(() => 'resolved'), 'resolved', 'a second close() is a no-op');
});

t.test('close() with the Redis answering keeps what was written and closes the connection', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const store = await openStore({ backend: 'redis', url: redis.url });
  await store.collection('notes').set('k', { n: 1 });
  await store.close();
  t.equal(socketsTo(redis.port).length, 0, 'the connection is closed');
  const again = await openStore({ backend: 'redis', url: redis.url });
  t.teardown(() => again.close());
  t.same(await again.collection('notes').get('k'), { n: 1 });
});

t.test('a call after close() fails as unavailable and does not reconnect', async (t) => {
  const redis = await startRedis();
  t.teardown(redis.stop);
  const store = await openStore({ backend: 'redis', url: redis.url });
  const notes = store.collection<{ n: number }>('notes');
  await notes.set('k', { n: 1 });
  await store.close();
  // keyv's Redis adapter connects a client that is not open: work that outlived a shutdown reopened the
  // connection (and its socket kept the process alive after every test had ended).
  const late = await notes.get('k').then(
    (v) => `answered ${JSON.stringify(v)}`,
    (err: { statusCode?: number; code?: string }) => `${err.statusCode} ${err.code}`,
  );
  t.equal(late, '503 SB_ERR_STORE_UNAVAILABLE', 'a closed store answers nothing');
  t.equal(socketsTo(redis.port).length, 0, 'and has no connection to Redis');
});
