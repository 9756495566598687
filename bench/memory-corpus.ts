/**
 * The memory benches' corpus, shared by bench/memory.bench.ts and the footprint
 * child (bench/memory-footprint.ts) so both measure the same records.
 *
 * Deterministic: 20 words per record from a 3,000-word vocabulary with a
 * Zipf-like skew, so common words are common and queries hit a realistic share.
 * Every record ends with BROAD, so a query of those words matches every record:
 * the case that used to score and sort the whole namespace (issue 26).
 */
export const BROAD = 'agent note';

export function corpus(): {
  content: (i: number) => string;
  query: (i: number) => string;
  broad: (i: number) => string;
} {
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const syll = ['ka', 'lo', 'mi', 'ten', 'ra', 'vis', 'dor', 'pe', 'qua', 'sul', 'ne', 'tro', 'gam', 'bi', 'zel'];
  const vocab = Array.from({ length: 3000 }, () =>
    Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => syll[Math.floor(rnd() * syll.length)]).join(''),
  );
  const word = () => vocab[Math.floor(vocab.length * rnd() ** 2)];
  const texts: string[] = [];
  return {
    content: (i) => (texts[i] ??= `${Array.from({ length: 20 }, word).join(' ')} ${BROAD}`),
    query: () => `${word()} ${word()} ${word()}`,
    // Every term in every record; the odd ones add one ordinary word so the rarer term leads.
    broad: (i) => (i % 2 ? `${BROAD} ${word()}` : BROAD),
  };
}
