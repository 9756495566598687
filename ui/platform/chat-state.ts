/**
 * The chat transcript as a pure fold over the agent stream events (plugins/platform/agents/runtime/events.ts), so
 * a live stream, a replay after reload and the stored history all end in the same picture.
 */

export type ChatEvent =
  | { type: 'stream_start'; session_id: string; run_id?: string }
  | { type: 'token'; content: string }
  | { type: 'tool_call_start'; name: string; id: string }
  | { type: 'tool_call_result'; name: string; id: string; result: string }
  | { type: 'sub_agent_token'; agent: string; content: string }
  | { type: 'sub_agent_tool'; agent: string; name: string }
  | {
      type: 'done';
      response: string;
      session_id: string;
      turns_used: number;
      tools_called: string[];
      metadata: Record<string, unknown>;
    }
  | { type: 'error'; detail: string }
  | { type: 'cancelled' }
  | { type: 'run_resumed'; run_id: string };

export interface ToolCall {
  id: string;
  name: string;
  /** Undefined while the call runs. */
  result?: string;
  /** A sub-agent's call shown inside the parent's turn. */
  agent?: string;
}

/** One piece of an assistant turn, in the order it happened: text and tool calls interleave. */
export type Part = { kind: 'text'; text: string; agent?: string } | { kind: 'tool'; call: ToolCall };

export interface Message {
  role: 'user' | 'assistant';
  parts: Part[];
}

export type RunState = 'idle' | 'streaming' | 'done' | 'error' | 'cancelled';

export interface Transcript {
  session_id?: string;
  messages: Message[];
  state: RunState;
  /** The error's detail, or a notice such as a resumed run. */
  notice?: string;
  trace_id?: string;
  turns_used?: number;
}

export const emptyTranscript = (): Transcript => ({ messages: [], state: 'idle' });

/** Stored history (GET /agents/{name}/sessions/{id}) as transcript messages. */
export function fromHistory(messages: Array<{ role: string; content: string }>): Message[] {
  return messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content)
    .map((m) => ({ role: m.role as 'user' | 'assistant', parts: [{ kind: 'text', text: m.content }] }));
}

export function addUserMessage(t: Transcript, text: string): Transcript {
  return { ...t, messages: [...t.messages, { role: 'user', parts: [{ kind: 'text', text }] }] };
}

/** The assistant message the stream writes into: the last one, or a new one after a user message. */
function withAssistant(t: Transcript, edit: (parts: Part[]) => Part[]): Transcript {
  const messages = [...t.messages];
  const last = messages[messages.length - 1];
  if (last?.role === 'assistant') messages[messages.length - 1] = { ...last, parts: edit([...last.parts]) };
  else messages.push({ role: 'assistant', parts: edit([]) });
  return { ...t, messages };
}

function appendText(parts: Part[], text: string, agent?: string): Part[] {
  const last = parts[parts.length - 1];
  if (last?.kind === 'text' && last.agent === agent) parts[parts.length - 1] = { ...last, text: last.text + text };
  else parts.push(agent ? { kind: 'text', text, agent } : { kind: 'text', text });
  return parts;
}

export function applyEvent(t: Transcript, ev: ChatEvent): Transcript {
  switch (ev.type) {
    case 'stream_start': {
      // A run always answers in a message of its own, even right after the previous answer (a replay after reload).
      const last = t.messages[t.messages.length - 1];
      const fresh = last?.role === 'assistant' && last.parts.length === 0;
      const messages = fresh ? t.messages : [...t.messages, { role: 'assistant' as const, parts: [] }];
      return { ...t, messages, session_id: ev.session_id, state: 'streaming', notice: undefined };
    }
    case 'token':
      return withAssistant(t, (p) => appendText(p, ev.content));
    case 'sub_agent_token':
      return withAssistant(t, (p) => appendText(p, ev.content, ev.agent));
    case 'tool_call_start':
      return withAssistant(t, (p) => [...p, { kind: 'tool', call: { id: ev.id, name: ev.name } }]);
    case 'sub_agent_tool':
      return withAssistant(t, (p) => [
        ...p,
        { kind: 'tool', call: { id: `${ev.agent}:${ev.name}:${p.length}`, name: ev.name, agent: ev.agent } },
      ]);
    case 'tool_call_result':
      return withAssistant(t, (p) =>
        p.map((part) =>
          part.kind === 'tool' && part.call.id === ev.id
            ? { kind: 'tool', call: { ...part.call, result: ev.result } }
            : part,
        ),
      );
    case 'done': {
      // A client that joined late (or a model that streamed nothing) still shows the final answer.
      const next = withAssistant(t, (p) =>
        p.some((x) => x.kind === 'text' && !x.agent) || !ev.response ? p : appendText(p, ev.response),
      );
      const trace = ev.metadata?.trace_id;
      return {
        ...next,
        session_id: ev.session_id,
        state: 'done',
        turns_used: ev.turns_used,
        trace_id: typeof trace === 'string' ? trace : undefined,
      };
    }
    case 'error':
      return { ...t, state: 'error', notice: ev.detail };
    case 'cancelled':
      return { ...t, state: 'cancelled', notice: 'The run was cancelled.' };
    case 'run_resumed':
      return { ...t, state: 'streaming', notice: 'The run was resumed after a restart.' };
    default:
      return t;
  }
}

export const isTerminal = (ev: { type: string }) =>
  ev.type === 'done' || ev.type === 'error' || ev.type === 'cancelled';

/** The text of a message, for copy buttons and accessible summaries. */
export const messageText = (m: Message) =>
  m.parts.map((p) => (p.kind === 'text' ? p.text : `[${p.call.name}]`)).join('');
