import t from 'tap';
import { deepFreeze, isDeepFrozen } from '../../core/deep-frozen.ts';

t.test('deepFreeze freezes every level and marks the value', async (t) => {
  const v = deepFreeze({ a: { b: [1, { c: 'x' }] }, d: 'y' });
  t.ok(isDeepFrozen(v));
  t.ok(Object.isFrozen(v.a) && Object.isFrozen(v.a.b) && Object.isFrozen(v.a.b[1]));
  t.throws(() => {
    (v.a.b[1] as { c: string }).c = 'changed';
  }, TypeError);
});

t.test('a value frozen only at its top level is not deep-frozen, and deepFreeze still walks into it', async (t) => {
  const shallow = Object.freeze({ inner: { n: 1 } });
  t.notOk(isDeepFrozen(shallow), 'Object.freeze alone does not count');
  deepFreeze(shallow);
  t.ok(Object.isFrozen(shallow.inner), 'the nested object is frozen too');
  t.ok(isDeepFrozen(shallow));
});

t.test('primitives and unmarked objects are not deep-frozen', async (t) => {
  for (const v of [null, undefined, 1, 'a', {}, []]) t.notOk(isDeepFrozen(v), JSON.stringify(v) ?? 'undefined');
  t.equal(deepFreeze('text'), 'text');
});
