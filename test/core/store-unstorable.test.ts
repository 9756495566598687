import t from 'tap';
import { openStore, type StoreBackend } from '../../core/store.ts';
import { tempDir } from '../helpers/app.ts';

/** A value nested `depth` levels: deeper than keyv's recursive serialiser (and JSON.stringify) can walk. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

// Issue 13 item 3: a value that cannot be serialised was reported as SB_ERR_STORE_UNAVAILABLE (503)
// while the store was fine. It is the value's fault: a 422, and the store keeps working.
for (const backend of ['sqlite', 'memory', 'redis'] as StoreBackend[]) {
  t.test(`${backend}: an unserialisable value is a 422, not a store outage`, async (t) => {
    const store = await openStore({ backend, dataDir: tempDir(), url: 'redis://127.0.0.1:6379/0' });
    t.teardown(() => store.close());
    const name = `unstorable-${process.pid}-${Date.now()}`;
    const c = store.collection<unknown>(name);
    t.teardown(() => c.clear());
    await t.rejects(c.set('deep', { metadata: nested(200_000) }), { statusCode: 422, code: 'SB_ERR_VALUE_TOO_DEEP' });
    t.equal(await c.get('deep'), undefined, 'nothing was stored');
    t.equal(await store.healthcheck(), 'ok');
    await c.set('flat', { metadata: nested(20) });
    t.same(await c.get('flat'), { metadata: nested(20) }, 'ordinary writes still work');

    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const err = await c.set('cyclic', cyclic).then(
      () => undefined,
      (e: unknown) => e as { statusCode?: number },
    );
    t.ok(err, 'a value with a cycle is refused');
    t.not(err?.statusCode, 503, 'and not as a store outage');
  });
}
