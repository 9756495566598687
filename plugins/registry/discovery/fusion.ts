/**
 * How the lexical and semantic evidence become one relevance score in [0, 1]
 * that means the same for a server, a tool, an agent and a skill, and the
 * floor under which a result is noise. The numbers were chosen by a coarse
 * grid search on the development set in test/fixtures/discovery after its
 * queries were written (docs/discovery.md gives the results).
 */
export const FUSION = {
  /** Cosines of SIF sentence vectors: unrelated texts sit near 0.1, a paraphrase of the same job at 0.4-0.8. */
  cosZero: 0.2,
  cosFull: 0.75,
  lexicalWeight: 0.55,
  semanticWeight: 0.45,
  /** When both kinds of evidence agree, the result is surer than either alone says. */
  agreementBonus: 0,
  /** Results under this score are not returned: a query about something absent answers few or none. */
  floor: 0.25,
  /** A query that names the entity (its display name, typed as it is or nearly) scores at least this. */
  nameMatch: 0.9,
  /** Word alignment (each query word's best match among the doc's words, SIF-weighted), mapped to [0, 1]. */
  alignZero: 0.35,
  alignFull: 1,
  /** 0: the semantic evidence is the better of sentence cosine and alignment; else their blend with this weight. */
  alignBlend: 0,
  /** Multiplier for the kind a query asks for ("an agent that...", "a skill for..."). */
  kindHint: 1.15,
};

export function semanticScore(cos: number): number {
  return Math.min(1, Math.max(0, (cos - FUSION.cosZero) / (FUSION.cosFull - FUSION.cosZero)));
}

export function alignScore(a: number): number {
  return Math.min(1, Math.max(0, (a - FUSION.alignZero) / (FUSION.alignFull - FUSION.alignZero)));
}

/**
 * lexical: the doc's BM25 share of the query (bm25.ts), in [0, 1];
 * semantic: semanticScore of the cosine; nameMatch: the query names the entity.
 */
export function fuse(lexical: number, semantic: number, nameMatch: boolean): number {
  let s =
    FUSION.lexicalWeight * lexical +
    FUSION.semanticWeight * semantic +
    FUSION.agreementBonus * Math.min(lexical, semantic);
  if (nameMatch) s = Math.max(s, FUSION.nameMatch);
  return Math.min(1, s);
}
