/**
 * Typo tolerance: a query word the index does not know is matched against the
 * words of names, tool names and tags within a small edit distance (one edit
 * for words of 4-7 letters, two from 8), transpositions counting as one edit
 * (`wether`, `calender`, `kubernets`). Words are kept in buckets by length, so
 * a lookup reads only the buckets within reach.
 */

/** Optimal-string-alignment distance, or max + 1 as soon as it must exceed max. */
export function editDistance(a: string, b: string, max: number): number {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  let prev2 = new Array<number>(lb + 1).fill(0);
  let prev = Array.from({ length: lb + 1 }, (_, j) => j);
  let cur = new Array<number>(lb + 1).fill(0);
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= lb; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[lb]!;
}

export const allowedEdits = (word: string) => (word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0);

export class NameVocabulary {
  private readonly counts = new Map<string, number>();
  private readonly byLength = new Map<number, Set<string>>();

  add(words: Iterable<string>): void {
    for (const w of new Set(words)) {
      if (w.length < 3 || /\d/.test(w)) continue;
      const n = this.counts.get(w) ?? 0;
      this.counts.set(w, n + 1);
      if (n === 0) {
        let b = this.byLength.get(w.length);
        if (!b) this.byLength.set(w.length, (b = new Set()));
        b.add(w);
      }
    }
  }

  remove(words: Iterable<string>): void {
    for (const w of new Set(words)) {
      const n = this.counts.get(w);
      if (n === undefined) continue;
      if (n > 1) this.counts.set(w, n - 1);
      else {
        this.counts.delete(w);
        this.byLength.get(w.length)?.delete(w);
      }
    }
  }

  words(): Iterable<string> {
    return this.counts.keys();
  }

  has(word: string): boolean {
    return this.counts.has(word);
  }

  /** Known words within reach of `word`, closest first (ties: the more common word first), at most `limit`. */
  corrections(word: string, limit = 3): { word: string; distance: number }[] {
    const max = allowedEdits(word);
    if (max === 0) return [];
    const found: { word: string; distance: number; count: number }[] = [];
    for (let len = word.length - max; len <= word.length + max; len++) {
      for (const cand of this.byLength.get(len) ?? []) {
        const d = editDistance(word, cand, max);
        if (d <= max) found.push({ word: cand, distance: d, count: this.counts.get(cand) ?? 0 });
      }
    }
    found.sort((a, b) => a.distance - b.distance || b.count - a.count);
    return found.slice(0, limit).map(({ word: w, distance }) => ({ word: w, distance }));
  }
}
