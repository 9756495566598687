import type { MemoryProvider } from '../../../../core/primitives/memory.ts';
import type { ChatEvent } from '../../agents/runtime/events.ts';
import type { AgentRuntime, Caller, Prepared } from '../../agents/runtime/runtime.ts';
import type { AgentSpec } from '../../agents/schemas.ts';
import type { Budget } from './limits.ts';
import { workerPrompt } from './prompts.ts';
import type { TeamRunLog } from './run-log.ts';
import type { TaskRecord } from './run-store.ts';

export interface WorkerEnv {
  runtime: AgentRuntime;
  caller: Caller;
  budget: Budget;
  log: TeamRunLog;
  /** The expanded shared_memory_namespace, or null. */
  namespace: string | null;
  /** Least time between two `worker_token` events of one task. */
  tokenMs: number;
  specOf: SpecOf;
}

/** The member's spec for a run: with the team's shared namespace first among its pools, so the shared tools default to it. */
export function memberSpec(spec: AgentSpec, namespace: string | null): AgentSpec {
  return namespace
    ? { ...spec, shared_namespaces: [namespace, ...spec.shared_namespaces.filter((n) => n !== namespace)] }
    : spec;
}

/**
 * Prepare a member's chat in a session this run names and that cannot exist
 * yet (its id holds the run's fresh UUID): nothing to look up, load or merge.
 */
export async function prepareFresh(
  runtime: AgentRuntime,
  spec: AgentSpec,
  caller: Caller,
  sessionId: string,
): Promise<Prepared> {
  const p = await runtime.prepare(spec, caller);
  return { ...p, session: { ...p.session, session_id: sessionId }, fresh: true };
}

/** Specs read once per run: members keep the spec they started with. */
export type SpecOf = (name: string) => Promise<AgentSpec | undefined>;

/** Per-task session: attempt 1 is `<run>-<task>` (as in the exported script), a retry gets a session of its own. */
export const taskSession = (runId: string, task: TaskRecord) =>
  task.attempts > 1 ? `${runId}-${task.id}-${task.attempts}` : `${runId}-${task.id}`;

async function sharedFindings(mem: MemoryProvider | undefined, namespace: string | null): Promise<string> {
  if (!mem || !namespace) return '';
  try {
    const page = await mem.list(namespace, { limit: 50, offset: 0 });
    const notes = page.records.map((r) => `- ${r.content}`);
    return notes.length ? `\nShared findings of the team:\n${notes.join('\n')}` : '';
  } catch {
    return ''; // a memory outage costs the team its shared notes, not the task
  }
}

/**
 * Run one task on its worker, in its own chat session: the results of its
 * dependencies (and the team's shared findings) go into the prompt, streamed
 * text goes out as throttled `worker_token` events, and the result is shared
 * in the team namespace when there is one.
 */
export async function runTask(
  env: WorkerEnv,
  task: TaskRecord,
  board: Map<string, TaskRecord>,
  resume?: string,
): Promise<string> {
  const { runtime, caller, budget, log } = env;
  const runId = log.record.team_run_id;
  const agent = task.assigned_to!;
  const raw = await env.specOf(agent);
  if (!raw) throw new Error(`worker agent '${agent}' no longer exists`);
  const spec = memberSpec(raw, env.namespace);
  const prepared = await prepareFresh(runtime, spec, caller, taskSession(runId, task));
  let mem: MemoryProvider | undefined;
  if (env.namespace) {
    try {
      mem = runtime.resolve<MemoryProvider>(spec, caller, 'memory');
    } catch {
      mem = undefined;
    }
  }
  const deps = task.depends_on
    .map((d) => board.get(d)!)
    .map((d) => `\nResult of ${d.id} (${d.title}):\n${d.result}\n`)
    .join('');
  const resumeNote = resume
    ? `\nA previous attempt at this task stopped part way. Its output so far:\n${resume}\n`
    : '';
  const prompt = workerPrompt(task, deps + (await sharedFindings(mem, env.namespace)) + resumeNote);

  let buffered = '';
  let last = 0;
  const flushTokens = () => {
    if (!buffered) return;
    log.emit({ type: 'worker_token', agent, task_id: task.id, content: buffered });
    buffered = '';
    last = Date.now();
  };
  const emit = (ev: ChatEvent) => {
    if (ev.type !== 'token') return;
    buffered += ev.content;
    if (Date.now() - last >= env.tokenMs) flushTokens();
  };
  try {
    const r = await runtime.chat({ ...prepared, llm: budget.wrap(prepared.llm) }, prompt, {
      emit,
      signal: budget.signal,
      stream: true,
    });
    flushTokens();
    if (mem && env.namespace) {
      await mem
        .store(env.namespace, {
          key: `${runId}:${task.id}`,
          content: r.response,
          metadata: { team_run_id: runId, task_id: task.id, agent },
        })
        .catch(() => undefined); // best effort, as in the script
    }
    return r.response;
  } finally {
    flushTokens(); // the partial output of a failed attempt is in the event log, for a retry to resume from
  }
}
