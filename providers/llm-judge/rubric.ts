import { badRequest } from '../../core/errors.ts';
import type { Evaluator } from '../../core/primitives/evaluations.ts';

/** What a judge is asked to apply: the criteria and the form of its verdict. */
export interface Rubric {
  name: string;
  criteria: string;
  /** Numeric verdicts within [min, max]... */
  scale?: { min: number; max: number };
  /** ...or one of these categories. */
  categories?: string[];
  needsExpected: boolean;
  model?: string;
  /** An llm provider instance other than the judge's default. */
  llm?: string;
}

const FIVE = { min: 1, max: 5 };

/** The built-in evaluators, usable by id with no evaluator created. */
export const BUILTINS: Record<string, Rubric> = {
  'Builtin.Helpfulness': {
    name: 'Builtin.Helpfulness',
    criteria: 'How helpful the response is to the user: does it address what was asked, usefully and completely?',
    scale: FIVE,
    needsExpected: false,
  },
  'Builtin.Coherence': {
    name: 'Builtin.Coherence',
    criteria: 'How coherent the response is: logically consistent, well organised and easy to follow.',
    scale: FIVE,
    needsExpected: false,
  },
  'Builtin.Relevance': {
    name: 'Builtin.Relevance',
    criteria: 'How relevant the response is to the input: does it stay on the question without unrelated content?',
    scale: FIVE,
    needsExpected: false,
  },
  'Builtin.Correctness': {
    name: 'Builtin.Correctness',
    criteria:
      'How correct the response is compared with the expected output: same facts and conclusion, nothing contradicting it.',
    scale: FIVE,
    needsExpected: true,
  },
};

const bad = (detail: string) => badRequest('SB_ERR_EVALUATIONS_BAD_CONFIG', detail);

/**
 * An llm_judge evaluator's config, checked at create and update so a bad one
 * fails there (400 saying what to fix), not at the first evaluate. A number
 * for `scale` means 0..N.
 */
export function rubricOf(name: string, config: Record<string, unknown>): Rubric {
  const { criteria, scale, categories, model, llm, requires_expected_output } = config;
  if (criteria !== undefined && (typeof criteria !== 'string' || !criteria.trim()))
    throw bad(`config.criteria must be a non-empty text saying what the judge rates`);
  const r: Rubric = {
    name,
    criteria: typeof criteria === 'string' ? criteria : `Overall quality of the response for "${name}".`,
    needsExpected: requires_expected_output === true,
  };
  if (categories !== undefined) {
    if (!Array.isArray(categories) || categories.length < 2 || !categories.every((c) => typeof c === 'string' && c))
      throw bad('config.categories must be a list of at least two non-empty category names');
    if (scale !== undefined) throw bad('give config.scale or config.categories, not both');
    r.categories = categories as string[];
  } else if (typeof scale === 'number') {
    if (!(scale > 0)) throw bad('config.scale as a number is the maximum of a 0..N scale and must be above 0');
    r.scale = { min: 0, max: scale };
  } else if (scale !== undefined) {
    const s = scale as { min?: unknown; max?: unknown };
    if (typeof s !== 'object' || typeof s.min !== 'number' || typeof s.max !== 'number' || s.min >= s.max)
      throw bad('config.scale must be {min, max} with min below max (or a number N for 0..N)');
    r.scale = { min: s.min, max: s.max };
  } else r.scale = { min: 0, max: 1 };
  if (model !== undefined && typeof model !== 'string') throw bad('config.model must be a model name');
  if (llm !== undefined && typeof llm !== 'string') throw bad('config.llm must be an llm provider instance name');
  if (typeof model === 'string') r.model = model;
  if (typeof llm === 'string') r.llm = llm;
  return r;
}

export const rubricOfEvaluator = (ev: Evaluator): Rubric => rubricOf(ev.name, ev.config);
