import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import YAML from 'yaml';

/**
 * A script is a list of entries. The entry used for a request is the first
 * whose `match` (a regular expression, case-insensitive) matches the last
 * human message — the last user message that is not a tool result — or the
 * first entry without `match`. Within an entry, `turns` are played in order
 * through one tool loop: turn N answers the request that carries N assistant
 * messages after that human message (the last turn repeats if the loop goes on).
 * A single-turn entry may put `content` / `tool_calls` at top level.
 *
 * In `content`, `{{user}}` is the human message and `{{tool_result}}` the
 * content of the latest tool result, so an answer can carry what a tool found.
 *
 *   responses:
 *     - match: "remember (.+)"
 *       turns:
 *         - tool_calls: [{name: remember, input: {key: fact, content: "{{user}}"}}]
 *         - content: "I will remember that."
 *     - match: "what do you remember"
 *       turns:
 *         - tool_calls: [{name: recall, input: {key: fact}}]
 *         - content: "You told me: {{tool_result}}"
 *     - content: "Hello!"
 *
 * Provider options beside the script: `model`, `delay_ms` (before each answer)
 * and `chunk_delay_ms` (between streamed events).
 */
const ScriptToolCall = Type.Object({
  name: Type.String({ minLength: 1 }),
  input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  id: Type.Optional(Type.String()),
});
const Turn = Type.Object({
  content: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Type.Array(ScriptToolCall)),
  stop_reason: Type.Optional(Type.String()),
});
const Entry = Type.Intersect([
  Type.Object({ match: Type.Optional(Type.String()), turns: Type.Optional(Type.Array(Turn, { minItems: 1 })) }),
  Turn,
]);
export const Script = Type.Array(Entry, { minItems: 1 });
export type ScriptTurn = Static<typeof Turn>;
export type ScriptEntry = Static<typeof Entry>;

export function loadScript(options: Record<string, unknown>): ScriptEntry[] {
  let raw: unknown = options.responses;
  if (raw === undefined && typeof options.file === 'string') {
    const text = readFileSync(options.file, 'utf8');
    const parsed = options.file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text);
    raw = Array.isArray(parsed) ? parsed : (parsed as { responses?: unknown })?.responses;
  }
  if (raw === undefined)
    throw new Error("the scripted provider needs option 'responses' (a list) or 'file' (a YAML/JSON script)");
  const first = Value.Errors(Script, raw).First();
  if (first) throw new Error(`script is invalid at ${first.path || '/'}: ${first.message}`);
  const entries = raw as ScriptEntry[];
  for (const e of entries) if (e.match !== undefined) new RegExp(e.match, 'i');
  return entries;
}

export function turnsOf(entry: ScriptEntry): ScriptTurn[] {
  return entry.turns ?? [{ content: entry.content, tool_calls: entry.tool_calls, stop_reason: entry.stop_reason }];
}
