/**
 * The prompts the server sends to team members. They are the exported
 * script's prompts (export/python-run.ts), word for word, so one scripted LLM
 * answers a run the same way on the server and in the script.
 */
export function planPrompt(workers: string[], message: string): string {
  return `You are planning work for a team. Split the request below into tasks for these workers: ${workers.join(', ')}.
Answer with a JSON array only. Each task: {"id": "t1", "title": "...", "description": "...", "assigned_to": "<worker>", "depends_on": ["<task id>", ...]}.

Request:
${message}`;
}

/** Replanning (server only): the planner sees what failed and may add tasks; existing ids are taken. */
export function replanPrompt(workers: string[], message: string, board: string): string {
  return `Some tasks of the team failed. Plan replacement tasks for these workers: ${workers.join(', ')}.
Answer with a JSON array only (an empty array if nothing can be done), in the same task format; new tasks may depend on tasks that are done.

Request:
${message}

Task board:
${board}`;
}

export function workerPrompt(task: { id: string; title: string; description: string }, context: string): string {
  return `You are working on one task of a team run.
Task ${task.id}: ${task.title}
${task.description}
${context}`;
}

export function synthPrompt(message: string, results: string): string {
  return `Compose the final answer to the request from the task results.

Request:
${message}

Task results:
${results}`;
}

/** One line per task, as the script writes them: `<id> <title> [<status>]: <result>`. */
export function resultLines(
  tasks: Array<{ id: string; title: string; status: string; result: string | null; error: string | null }>,
): string {
  return tasks.map((t) => `${t.id} ${t.title} [${t.status}]: ${t.result ?? t.error ?? 'None'}`).join('\n');
}
