import t from 'tap';
import fc from 'fast-check';
import { jsonPathAt, scanJsonLimits } from '../../plugins/json-limits.ts';

// The text scan that guards every JSON body must agree with the parsed value: same verdict on depth and
// on members per object, for any JSON (strings full of brackets, quotes and escapes included).

/** Depth and widest object of a parsed value, walked with an explicit stack. */
function measure(value: unknown): { depth: number; widest: number } {
  let depth = 0;
  let widest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    depth = Math.max(depth, d);
    const children = Array.isArray(v) ? v : Object.values(v);
    if (!Array.isArray(v)) widest = Math.max(widest, children.length);
    for (const c of children) stack.push([c, d + 1]);
  }
  return { depth, widest };
}

const RUNS = Number(process.env.FUZZ_RUNS ?? 200) * 5;
const tricky = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', ',', '"', '\\', ':', 'a', ' ', '\u2028') });
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer(),
    tricky,
    fc.constant(null),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(tricky, tie('value'), { maxKeys: 6 }),
})).value;

t.test('scanJsonLimits agrees with the parsed value', async (t) => {
  fc.assert(
    fc.property(
      json,
      fc.integer({ min: 2, max: 8 }),
      fc.integer({ min: 1, max: 6 }),
      fc.boolean(),
      (value, maxDepth, maxObjectKeys, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const { depth, widest } = measure(value);
        const v = scanJsonLimits(text, { maxDepth, maxObjectKeys });
        if (depth > maxDepth || widest > maxObjectKeys) {
          if (!v) return false;
          // The offset points at the bracket that went too deep, or a comma inside the too-wide object.
          return v.limit === 'depth' ? '{['.includes(text[v.offset]) : text[v.offset] === ',';
        }
        return v === undefined;
      },
    ),
    { numRuns: RUNS },
  );
  t.pass(`${RUNS} generated documents`);
});

t.test('jsonPathAt names keys and indexes on the way to an offset', async (t) => {
  const text = JSON.stringify({ 'a"b': [0, { 'k\\': { deep: [[1]] } }] });
  const v = scanJsonLimits(text, { maxDepth: 5, maxObjectKeys: 10 });
  t.equal(v?.limit, 'depth');
  t.same(jsonPathAt(text, v!.offset), ['a"b', 1, 'k\\', 'deep', 0]);
});
