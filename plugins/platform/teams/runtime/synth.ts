import type { AgentRuntime, Caller } from '../../agents/runtime/runtime.ts';
import type { Budget } from './limits.ts';
import { resultLines, synthPrompt } from './prompts.ts';
import type { TaskRecord } from './run-store.ts';
import { prepareFresh, type SpecOf } from './worker.ts';

/** The synthesizer gets the request and every task's result (failed ones with their reason) and writes the answer. */
export async function synthesize(
  runtime: AgentRuntime,
  specOf: SpecOf,
  caller: Caller,
  budget: Budget,
  runId: string,
  name: string,
  message: string,
  tasks: TaskRecord[],
  attempt = 0,
): Promise<string> {
  const spec = await specOf(name);
  if (!spec) throw new Error(`synthesizer agent '${name}' no longer exists`);
  const session = attempt > 0 ? `${runId}-synthesizer-${attempt + 1}` : `${runId}-synthesizer`;
  const prepared = await prepareFresh(runtime, spec, caller, session);
  const r = await runtime.chat(
    { ...prepared, llm: budget.wrap(prepared.llm) },
    synthPrompt(message, resultLines(tasks)),
    { signal: budget.signal },
  );
  return r.response;
}
