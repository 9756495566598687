import type { BoundTool } from '../../agents/runtime/catalog.ts';
import type { TaskRecord } from './run-store.ts';

export interface PlannedTask {
  id?: unknown;
  title?: unknown;
  description?: unknown;
  assigned_to?: unknown;
  depends_on?: unknown;
}

/** Normalise what the planner gave (tool calls or a JSON list) into board entries, as the script does. */
export function toTasks(raw: PlannedTask[], taken: Set<string>): TaskRecord[] {
  const out: TaskRecord[] = [];
  raw.forEach((item, i) => {
    if (!item || typeof item !== 'object') return;
    const base = item.id === undefined || item.id === null || item.id === '' ? `t${i + 1}` : String(item.id);
    // A replan (or a planner repeating itself) must not overwrite a task on the board: `a`, `a_2`, `a_3`...
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    const description = typeof item.description === 'string' ? item.description : '';
    out.push({
      id,
      title: typeof item.title === 'string' && item.title ? item.title : description || `task ${i + 1}`,
      description,
      assigned_to: typeof item.assigned_to === 'string' ? item.assigned_to : null,
      depends_on: Array.isArray(item.depends_on) ? item.depends_on.map(String) : [],
      status: 'pending',
      result: null,
      error: null,
      attempts: 0,
    });
  });
  return out;
}

/** The first JSON array in the answer (the script's rule); undefined when there is none. */
export function extractTaskList(text: string): PlannedTask[] | undefined {
  const start = text.indexOf('[');
  const end = text.lastIndexOf(']');
  if (start < 0 || end <= start) return undefined;
  try {
    const parsed = JSON.parse(text.slice(start, end + 1)) as unknown;
    return Array.isArray(parsed) ? (parsed as PlannedTask[]) : undefined;
  } catch {
    return undefined;
  }
}

/** `create_task` for the planner's run: each call adds one task to the plan being written. */
export function createTaskTool(collected: PlannedTask[], workers: string[]): BoundTool {
  return {
    name: 'create_task',
    description: `Add one task to the team's plan. Workers: ${workers.join(', ')}.`,
    input_schema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'Short unique id, e.g. t1' },
        title: { type: 'string' },
        description: { type: 'string' },
        assigned_to: { type: 'string', enum: workers },
        depends_on: {
          type: 'array',
          items: { type: 'string' },
          description: 'Ids of tasks whose results this task needs',
        },
      },
      required: ['title', 'assigned_to'],
    },
    primitive: 'task_board',
    provider: 'team',
    async run(input) {
      collected.push(input as PlannedTask);
      const id = input.id ?? `t${collected.length}`;
      return `Task '${String(id)}' created (${collected.length} so far).`;
    },
  };
}

/**
 * Mark the tasks that can never run as failed, with the reason: an unknown
 * worker, a dependency on a task that does not exist, a dependency cycle.
 * Dependants of failed tasks are failed by the scheduler as it goes.
 */
export function validateGraph(tasks: TaskRecord[], workers: string[], board: Map<string, TaskRecord>): TaskRecord[] {
  const failed: TaskRecord[] = [];
  const fail = (t: TaskRecord, error: string) => {
    t.status = 'failed';
    t.error = error;
    failed.push(t);
  };
  for (const t of tasks) {
    if (!t.assigned_to || !workers.includes(t.assigned_to))
      fail(t, `assigned to unknown worker '${t.assigned_to ?? ''}' (workers: ${workers.join(', ')})`);
    else {
      const missing = t.depends_on.filter((d) => !board.has(d));
      if (missing.length) fail(t, `depends on unknown task ${missing.map((m) => `'${m}'`).join(', ')}`);
    }
  }
  // Cycles: depth-first over pending tasks; every task on a cycle fails naming it.
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string) => {
    const t = board.get(id);
    if (!t || state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') {
      const cycle = [...stack.slice(stack.indexOf(id)), id];
      for (const c of new Set(cycle)) {
        const ct = board.get(c)!;
        if (ct.status === 'pending') fail(ct, `dependency cycle: ${cycle.join(' -> ')}`);
      }
      return;
    }
    state.set(id, 'visiting');
    stack.push(id);
    for (const d of t.depends_on) visit(d);
    stack.pop();
    state.set(id, 'done');
  };
  for (const t of tasks) visit(t.id);
  return failed;
}
