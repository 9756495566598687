import fc from 'fast-check';
import t from 'tap';
import { Bm25Index } from '../../providers/keyv/bm25-index.ts';
import { normaliseTerm } from '../../providers/keyv/search-index.ts';

// A small vocabulary so terms repeat across records; "common" is put in every record
// so broad queries (every term in every record) are always part of the mix.
const VOCAB = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
];
// Now and then a record's content holds another record's key ("k1"): a key is its own term, so such a
// term moves from the key's packed singleton to shared postings and back.
const word = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...VOCAB) },
  { weight: 1, arbitrary: fc.constantFrom('k1', 'k2', 'k7', 'k30') },
);
const record = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => `common ${ws.join(' ')}`);
const query = fc.oneof(
  fc.array(word, { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' ')),
  fc.array(word, { minLength: 0, maxLength: 3 }).map((ws) => ['common', ...ws].join(' ')),
  fc.constant('common'),
  fc.constant('common common'),
);
// Operations: put (possibly replacing a key) or remove, so tombstones and compaction are exercised.
const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), key: fc.integer({ min: 0, max: 40 }), content: record }),
  fc.record({ kind: fc.constant('del' as const), key: fc.integer({ min: 0, max: 40 }) }),
);

function build(ops: { kind: 'put' | 'del'; key: number; content?: string }[]) {
  const idx = new Bm25Index(normaliseTerm);
  const contents = new Map<string, string>();
  for (const o of ops) {
    const key = `k${o.key}`;
    if (o.kind === 'put') {
      const prev = contents.get(key);
      if (prev !== undefined) idx.remove(key, prev);
      idx.add(key, o.content as string);
      contents.set(key, o.content as string);
    } else if (contents.has(key)) {
      idx.remove(key, contents.get(key) as string);
      contents.delete(key);
    }
  }
  return { idx, contents };
}

function same(_t: unknown, a: { key: string; score: number }[], b: { key: string; score: number }[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((h, i) => h.key === b[i].key && Math.abs(h.score - b[i].score) <= 1e-9);
}

t.test('MaxScore top-k equals exhaustive BM25: same ids in the same order, scores within 1e-9', async (t) => {
  let broadChecked = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), query, fc.integer({ min: 1, max: 15 }), (ops, q, k) => {
      const { idx, contents } = build(ops);
      const pruned = idx.search(q, k);
      const full = idx.exhaustive(q, k);
      if (/^common( common)?$/.test(q) && contents.size > 0) {
        broadChecked++;
        // A broad query matches every live record.
        if (full.length !== Math.min(k, contents.size)) return false;
      }
      if (pruned.some((h) => !contents.has(h.key))) return false;
      if (idx.size !== contents.size || [...contents.keys()].some((key) => !idx.has(key))) return false;
      if (idx.has('k999') || [...Array(41).keys()].some((i) => !contents.has(`k${i}`) && idx.has(`k${i}`)))
        return false;
      return same(t, pruned, full);
    }),
    { numRuns: 400, seed: 26 },
  );
  t.ok(broadChecked > 0, `broad queries were among the generated cases (${broadChecked})`);
});

t.test('with a filter the pruned search still equals the exhaustive one over the accepted records', async (t) => {
  fc.assert(
    fc.property(
      fc.array(op, { minLength: 1, maxLength: 80 }),
      query,
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 2, max: 4 }),
      (ops, q, k, mod) => {
        const { idx } = build(ops);
        const accept = (key: string) => Number(key.slice(1)) % mod === 0;
        return same(t, idx.search(q, k, accept), idx.exhaustive(q, k, accept));
      },
    ),
    { numRuns: 200, seed: 7 },
  );
  t.pass('200 generated corpora agreed');
});

t.test('a broad query over many records: top-k agrees and the best record ranks first', async (t) => {
  const idx = new Bm25Index(normaliseTerm);
  for (let i = 0; i < 5000; i++)
    idx.add(`r${i}`, `common ${VOCAB[i % VOCAB.length]} ${VOCAB[(i * 7) % VOCAB.length]} filler${i % 97}`);
  idx.add('short', 'common');
  const pruned = idx.search('common', 10);
  t.same(pruned, idx.exhaustive('common', 10));
  t.equal(pruned[0].key, 'short', 'the shortest record holding the term scores highest');
  t.equal(idx.search('nothing-here', 10).length, 0);
});

t.test('a snapshot decodes to an index that ranks exactly as the one encoded', async (t) => {
  const { encodeIndex, decodeIndex } = await import('../../providers/keyv/index-snapshot.ts');
  await fc.assert(
    fc.asyncProperty(
      fc.array(op, { minLength: 1, maxLength: 80 }),
      query,
      fc.integer({ min: 1, max: 10 }),
      async (ops, q, k) => {
        const { idx } = build(ops);
        const bytes = await encodeIndex(idx);
        if (!bytes) return false;
        const back = await decodeIndex(bytes, normaliseTerm);
        return (
          back.size === idx.size &&
          same(t, back.search(q, k), idx.search(q, k)) &&
          same(t, back.search(q, k), back.exhaustive(q, k))
        );
      },
    ),
    { numRuns: 150, seed: 11 },
  );
  t.pass('150 generated corpora round-tripped');
});

t.test('renumbering after heavy churn and wide term counts keep the equivalence', async (t) => {
  const idx = new Bm25Index(normaliseTerm);
  const contents = new Map<string, string>();
  // 3,000 replaces of 100 keys: dead ids pile up until the table is renumbered.
  for (let i = 0; i < 3000; i++) {
    const key = `k${i % 100}`;
    const content = `common ${VOCAB[i % VOCAB.length]} ${VOCAB[(i * 5) % VOCAB.length]} n${i % 7}`;
    idx.add(key, content, {}, contents.get(key));
    contents.set(key, content);
  }
  t.equal(idx.size, 100);
  t.ok(idx.slots < 3000, `dead ids were renumbered away (${idx.slots} ids for 100 records)`);
  // A term counted past 8 and 16 bits widens its postings' counts without changing the ranking.
  idx.add('wide', `${'alpha '.repeat(300)}common`);
  idx.add('wider', `${'alpha '.repeat(70_000)}common`);
  for (const q of ['common', 'alpha', 'common alpha', 'alpha n3', 'n3 common golf']) {
    t.same(idx.search(q, 7), idx.exhaustive(q, 7), q);
  }
  t.equal(idx.search('alpha', 1)[0].key, 'wider', 'the largest count is kept exactly');
  const { encodeIndex, decodeIndex } = await import('../../providers/keyv/index-snapshot.ts');
  const back = await decodeIndex((await encodeIndex(idx)) as Buffer, normaliseTerm);
  t.same(back.search('alpha common', 10), idx.search('alpha common', 10), 'and survive a snapshot');
});

t.test(
  'records that tie rank by key: the pruned search compares key heads, then whole keys, as the exhaustive one does',
  async (t) => {
    // Keys sharing their first units (and some holding U+0000, surrogates or fewer than three units), all
    // with the same content: every record ties, so only the keys decide the top k.
    const unit = fc.constantFrom(
      'a',
      'b',
      'ab',
      '\u0000',
      '\ud83d\ude00',
      'é',
      'Z',
      '1',
      '10',
      'あ',
      'い',
      '\u03fe',
      '\u03ff',
      '\u0400',
    );
    const key = fc
      .tuple(
        fc.constantFrom('', 'a', 'ab', 'abc', 'abd', '\u0000', 'あい', '\u03ffa'),
        fc.array(unit, { maxLength: 4 }),
      )
      .map(([p, us]) => p + us.join(''))
      .filter((k) => k.length > 0);
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (keys, k) => {
        const idx = new Bm25Index(normaliseTerm);
        for (const key of keys) idx.add(key, 'common ground');
        const pruned = idx.search('common ground', k);
        const full = idx.exhaustive('common ground', k);
        // A key that is itself a term of the query scores higher; the others tie and come in key order.
        return (
          same(t, pruned, full) &&
          full.every((h, i) => i === 0 || h.score < full[i - 1].score || full[i - 1].key < h.key)
        );
      }),
      { numRuns: 300, seed: 42 },
    );
    // Keys that all start above the head's 10-bit range: their order is decided past what the head holds.
    const high = fc
      .tuple(
        fc.constantFrom('あ', 'い', '\u0400', '\u03ff'),
        fc.array(fc.constantFrom('a', 'b', '\u0000', 'あ', 'z'), { maxLength: 3 }),
      )
      .map(([h, us]) => h + us.join(''));
    fc.assert(
      fc.property(fc.uniqueArray(high, { minLength: 2, maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (keys, k) => {
        const idx = new Bm25Index(normaliseTerm);
        for (const key of keys) idx.add(key, 'common ground');
        return same(t, idx.search('common ground', k), idx.exhaustive('common ground', k));
      }),
      { numRuns: 300, seed: 43 },
    );
    t.pass('300 generated key sets ranked alike');
  },
);

t.test(
  'one-word prefix queries: the prefix dictionary finds what a scan of every term finds, through churn',
  async (t) => {
    // Words in prefix families (and keys that are words of them: key terms are prefix candidates too), some
    // past the key head's 10-bit range, where many terms share one group.
    const PFX = [
      'alpha',
      'alphabet',
      'alphanumeric',
      'alpine',
      'alp',
      'agent',
      'agenda',
      'agents',
      'agentic',
      'ageless',
      'あいうえ',
      'あいうえお',
      'あいか',
      '\u0400abcd',
      '\u0400abce',
      'common',
    ];
    const pword = fc.constantFrom(...PFX);
    const pkey = fc.oneof(
      fc.integer({ min: 0, max: 15 }).map((i) => `alpha${i}`),
      fc.integer({ min: 0, max: 15 }).map((i) => `agent${i}`),
      fc.constantFrom('alphabet', 'agenda', 'あいうえお', 'k1'),
    );
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        key: pkey,
        content: fc.array(pword, { minLength: 1, maxLength: 8 }).map((ws) => ws.join(' ')),
      }),
      fc.record({ kind: fc.constant('del' as const), key: pkey }),
      fc.record({
        kind: fc.constant('query' as const),
        q: fc.constantFrom(
          'alph',
          'alpha',
          'alpha1',
          'agen',
          'agent',
          'agent1',
          'ageless',
          'あいう',
          'あいうえ',
          '\u0400abc',
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 8 }),
        async (steps, k) => {
          const idx = new Bm25Index(normaliseTerm);
          const contents = new Map<string, string>();
          for (const s of steps) {
            if (s.kind === 'put') {
              idx.add(s.key, s.content, {}, contents.get(s.key));
              contents.set(s.key, s.content);
            } else if (s.kind === 'del') {
              const prev = contents.get(s.key);
              if (prev !== undefined) idx.remove(s.key, prev);
              contents.delete(s.key);
            } else {
              const p = normaliseTerm(s.q) as string;
              if (idx.prefixMatches(p).join('\n') !== idx.prefixMatches(p, true).join('\n')) return false;
              if (!same(t, idx.search(s.q, k), idx.exhaustive(s.q, k))) return false;
            }
          }
          const { encodeIndex, decodeIndex } = await import('../../providers/keyv/index-snapshot.ts');
          const bytes = await encodeIndex(idx);
          if (!bytes) return false;
          const back = await decodeIndex(bytes, normaliseTerm);
          return ['alph', 'agent', 'あいうえ'].every((q) => same(t, back.search(q, k), idx.exhaustive(q, k)));
        },
      ),
      { numRuns: 300, seed: 26 },
    );
    // Churn past the stale bound rebuilds the groups; deleted terms are not matched and re-added ones once.
    const idx = new Bm25Index(normaliseTerm);
    idx.add('seed', 'alphabet');
    t.same(idx.prefixMatches('alph'), ['alphabet']);
    for (let i = 0; i < 3000; i++) {
      idx.add(`alpha${i}`, 'common');
      idx.remove(`alpha${i}`, 'common');
    }
    idx.add('alpha7', 'alphanumeric');
    idx.add('x', 'alpha7');
    t.same(idx.prefixMatches('alph'), ['alpha7', 'alphabet', 'alphanumeric']);
    t.same(idx.prefixMatches('alph'), idx.prefixMatches('alph', true));
    t.same(idx.search('alph', 5), idx.exhaustive('alph', 5));
  },
);

t.test(
  'a loaded index decodes postings on first use: writes and removals after a load rank as on the index encoded',
  async (t) => {
    const { encodeIndex, decodeIndex } = await import('../../providers/keyv/index-snapshot.ts');
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 60 }),
        fc.array(op, { minLength: 1, maxLength: 30 }),
        query,
        fc.integer({ min: 1, max: 10 }),
        async (before, after, q, k) => {
          const { idx, contents } = build(before);
          const back = await decodeIndex((await encodeIndex(idx)) as Buffer, normaliseTerm);
          // The same writes on both, the loaded one's postings still undecoded when the first write reaches them.
          for (const o of after) {
            const key = `k${o.key}`;
            const prev = contents.get(key);
            for (const x of [idx, back]) {
              if (prev !== undefined) x.remove(key, prev);
              if (o.kind === 'put') x.add(key, o.content as string);
            }
            if (o.kind === 'put') contents.set(key, o.content as string);
            else contents.delete(key);
          }
          return same(t, back.search(q, k), idx.search(q, k)) && same(t, back.exhaustive(q, k), idx.exhaustive(q, k));
        },
      ),
      { numRuns: 150, seed: 27 },
    );
    t.pass('150 corpora written to after a load');
  },
);
