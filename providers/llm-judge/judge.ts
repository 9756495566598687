import { badGateway, badRequest, isSwitchboardError, unavailable } from '../../core/errors.ts';
import type { EvaluatedScore } from '../../core/primitives/evaluations.ts';
import type { ChatMessage, LlmProvider } from '../../core/primitives/llm.ts';
import type { Rubric } from './rubric.ts';

export interface Sample {
  input: string;
  output: string;
  expected?: string;
}

const SYSTEM =
  'You are a strict, fair evaluator. You rate a response against the given criteria and answer with one JSON ' +
  'object only, no other text: {"score": <verdict>, "reasoning": "<one or two sentences>"}.';

function verdictForm(r: Rubric): string {
  if (r.categories) return `"score" is exactly one of: ${r.categories.map((c) => JSON.stringify(c)).join(', ')}.`;
  return `"score" is a number from ${r.scale!.min} (worst) to ${r.scale!.max} (best).`;
}

/** The marker the first line starts with: scripted test LLMs match on it. */
export const JUDGE_PROMPT_START = 'Judge this response.';

export function promptOf(r: Rubric, s: Sample): string {
  const parts = [
    JUDGE_PROMPT_START,
    `Criteria: ${r.criteria}`,
    verdictForm(r),
    `<input>\n${s.input}\n</input>`,
    `<response>\n${s.output}\n</response>`,
  ];
  if (s.expected !== undefined) parts.push(`<expected_output>\n${s.expected}\n</expected_output>`);
  return parts.join('\n\n');
}

/** The JSON object in an answer (models wrap it in prose or code fences), checked against the rubric. */
export function parseVerdict(r: Rubric, text: string): { value: number | string; reasoning: string } | string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return 'the answer holds no JSON object';
  let v: unknown;
  try {
    v = JSON.parse(text.slice(start, end + 1));
  } catch {
    return 'the JSON object does not parse';
  }
  const { score, reasoning } = (v ?? {}) as { score?: unknown; reasoning?: unknown };
  const why = typeof reasoning === 'string' ? reasoning : '';
  if (r.categories) {
    if (typeof score !== 'string' || !r.categories.includes(score))
      return `"score" must be one of ${r.categories.join(', ')}`;
    return { value: score, reasoning: why };
  }
  const n = typeof score === 'string' && score.trim() !== '' ? Number(score) : score;
  if (typeof n !== 'number' || Number.isNaN(n) || n < r.scale!.min || n > r.scale!.max)
    return `"score" must be a number from ${r.scale!.min} to ${r.scale!.max}`;
  return { value: n, reasoning: why };
}

/**
 * Ask the LLM for a verdict. A malformed answer is sent back once with what
 * was wrong; a second malformed answer is a 502 naming the evaluator (the
 * judge, a dependency, misbehaved; the caller's request was fine).
 */
export async function judge(llm: LlmProvider, r: Rubric, s: Sample, evaluatorId: string): Promise<EvaluatedScore> {
  if (r.needsExpected && s.expected === undefined)
    throw badRequest(
      'SB_ERR_EVALUATIONS_EXPECTED_OUTPUT_REQUIRED',
      `Evaluator '${evaluatorId}' compares with an expected answer: pass expected_output`,
    );
  const messages: ChatMessage[] = [{ role: 'user', content: promptOf(r, s) }];
  let problem = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    let text: string;
    try {
      const res = await llm.complete({
        ...(r.model ? { model: r.model } : {}),
        system: SYSTEM,
        messages: [...messages],
        temperature: 0,
      });
      text = res.content;
    } catch (err) {
      if (isSwitchboardError(err)) throw err;
      throw unavailable(
        'SB_ERR_EVALUATIONS_JUDGE_UNAVAILABLE',
        `The judge LLM '${llm.name}' of evaluator '${evaluatorId}' failed: ${(err as Error).message}`,
        err,
      );
    }
    const v = parseVerdict(r, text);
    if (typeof v !== 'string')
      return {
        name: r.name,
        value: v.value,
        data_type: r.categories ? 'CATEGORICAL' : 'NUMERIC',
        comment: v.reasoning,
      };
    problem = v;
    messages.push(
      { role: 'assistant', content: text },
      {
        role: 'user',
        content: `Your previous answer was not a valid verdict: ${v}. Answer again with only the JSON object {"score": ..., "reasoning": "..."}.`,
      },
    );
  }
  throw badGateway(
    'SB_ERR_EVALUATIONS_JUDGE_MALFORMED',
    `Evaluator '${evaluatorId}': the judge LLM '${llm.name}' gave no valid verdict after a retry (${problem})`,
  );
}
