import { badGateway, isSwitchboardError } from '../../../../core/errors.ts';
import type {
  ChatMessage,
  CompletionRequest,
  CompletionResponse,
  LlmProvider,
  ToolCall,
} from '../../../../core/primitives/llm.ts';
import type { Span } from '../../../../core/primitives/observability.ts';
import type { AgentSpec } from '../schemas.ts';
import type { BoundTool } from './catalog.ts';
import { RunCancelled, type Emit } from './events.ts';

/** Tool output beyond this goes back to the model truncated, so one tool cannot flood the context. */
const MAX_TOOL_RESULT = 50_000;

export interface LoopInput {
  spec: AgentSpec;
  messages: ChatMessage[];
  tools: BoundTool[];
  llm: LlmProvider;
  emit: Emit;
  /** Ask the provider for a token stream (when it can stream) so `token` events flow. */
  stream: boolean;
  signal: AbortSignal;
  /** Text the model produced so far, kept for a cancellation checkpoint. */
  onText?: (text: string) => void;
  /** Policy enforcement: asked before every tool call; false turns the call into a tool error the model sees. */
  gate?: (tool: string, args: Record<string, unknown>) => Promise<boolean>;
  /** auto_trace: told about every LLM turn and tool call as it ends (spans of the run's trace). */
  observe?: (span: Span) => void;
}

export interface LoopResult {
  response: string;
  turns_used: number;
  tools_called: string[];
  max_turns_reached: boolean;
}

export function maxTurnsMessage(n: number): string {
  return `Stopped: the agent reached its max_turns limit (${n}) before giving a final answer.`;
}

function checkCancel(signal: AbortSignal): void {
  if (signal.aborted) throw new RunCancelled();
}

type ModelAnswer = Pick<CompletionResponse, 'content' | 'tool_calls'> & {
  model?: string;
  usage?: { input_tokens: number; output_tokens: number };
};

/** The generation span of one LLM turn (GenAI usage names), for auto_trace. */
function generationSpan(input: LoopInput, turn: number, started: string, r: ModelAnswer): Span {
  return {
    name: `turn ${turn}`,
    start_time: started,
    end_time: new Date().toISOString(),
    output: r.content,
    ...(r.usage ? { usage: r.usage } : {}),
    metadata: {
      type: 'generation',
      model: r.model ?? input.spec.model,
      provider: input.llm.name,
      ...(r.tool_calls.length ? { tool_calls: r.tool_calls.map((c) => c.name) } : {}),
    },
  };
}

async function callModel(input: LoopInput, req: CompletionRequest): Promise<ModelAnswer> {
  const { llm, signal } = input;
  try {
    if (!input.stream || !llm.capabilities.streaming) {
      const r = await llm.complete(req, { signal });
      if (r.content) {
        input.emit({ type: 'token', content: r.content });
        input.onText?.(r.content);
      }
      return {
        ...r,
        usage: { input_tokens: r.usage.prompt_tokens, output_tokens: r.usage.completion_tokens },
      };
    }
    let content = '';
    const calls: ToolCall[] = [];
    let model: string | undefined;
    let usage: ModelAnswer['usage'];
    for await (const ev of llm.stream(req, { signal })) {
      checkCancel(signal);
      if (ev.type === 'content_delta' && ev.delta) {
        content += ev.delta;
        input.emit({ type: 'token', content: ev.delta });
        input.onText?.(ev.delta);
      } else if (ev.type === 'tool_use_complete') {
        calls.push({ id: ev.id, name: ev.name, input: ev.input ?? {} });
      } else if (ev.type === 'message_stop') model = ev.model;
      else if (ev.type === 'metadata') usage = ev.usage;
    }
    return { content, tool_calls: calls, ...(model ? { model } : {}), ...(usage ? { usage } : {}) };
  } catch (err) {
    if (signal.aborted) throw new RunCancelled();
    if (isSwitchboardError(err)) throw err;
    // A provider that failed without a coded error: say which one, as a gateway error, not a 500.
    throw badGateway(
      'SB_ERR_AGENT_LLM_FAILED',
      `The LLM provider '${llm.name}' failed: ${(err as Error)?.message ?? String(err)}`,
      err,
    );
  }
}

async function runTool(input: LoopInput, call: ToolCall): Promise<string> {
  const started = new Date().toISOString();
  const tool = input.tools.find((t) => t.name === call.name);
  input.emit({ type: 'tool_call_start', name: call.name, id: call.id });
  let result: string;
  if (!tool) {
    result = `Error: unknown tool '${call.name}'. Available tools: ${input.tools.map((t) => t.name).join(', ') || '(none)'}`;
  } else if (input.gate && !(await input.gate(call.name, call.input ?? {}))) {
    result = `Error: tool '${call.name}' was denied by policy (tools:invoke on Tool::"${call.name}"); do not retry it, answer without it or ask the user`;
  } else {
    try {
      result = await tool.run(call.input ?? {}, { emit: input.emit, signal: input.signal });
    } catch (err) {
      if (err instanceof RunCancelled || input.signal.aborted) throw new RunCancelled();
      result = `Error: ${(err as Error).message || String(err)}`;
    }
  }
  if (result.length > MAX_TOOL_RESULT) result = `${result.slice(0, MAX_TOOL_RESULT)}… [truncated]`;
  input.emit({ type: 'tool_call_result', name: call.name, id: call.id, result });
  input.observe?.({
    name: call.name,
    start_time: started,
    end_time: new Date().toISOString(),
    input: call.input ?? {},
    output: result,
    metadata: { type: 'tool', call_id: call.id },
  });
  return result;
}

/**
 * The tool loop: ask the model, run the tool calls it asks for (all calls of one
 * turn in parallel), feed the results back, until it answers without tools or
 * `max_turns` model calls were made.
 */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const { spec } = input;
  const messages = [...input.messages];
  const toolDefs = input.tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
  const toolsCalled: string[] = [];
  let lastContent = '';
  for (let turn = 1; turn <= spec.max_turns; turn++) {
    checkCancel(input.signal);
    const req: CompletionRequest = {
      model: spec.model,
      system: spec.system_prompt,
      // A snapshot: providers (and their test doubles) may keep the request after we append to it.
      messages: [...messages],
      temperature: spec.temperature,
      ...(toolDefs.length ? { tools: toolDefs } : {}),
      ...(spec.max_tokens ? { max_tokens: spec.max_tokens } : {}),
    };
    const started = new Date().toISOString();
    const r = await callModel(input, req);
    input.observe?.(generationSpan(input, turn, started, r));
    lastContent = r.content;
    if (r.tool_calls.length === 0)
      return { response: r.content, turns_used: turn, tools_called: toolsCalled, max_turns_reached: false };
    messages.push({ role: 'assistant', content: r.content, tool_calls: r.tool_calls });
    toolsCalled.push(...r.tool_calls.map((c) => c.name));
    const results = await Promise.all(r.tool_calls.map((c) => runTool(input, c)));
    checkCancel(input.signal);
    messages.push({
      role: 'user',
      content: '',
      tool_results: r.tool_calls.map((c, i) => ({ tool_use_id: c.id, content: results[i]! })),
    });
  }
  const note = maxTurnsMessage(spec.max_turns);
  return {
    response: lastContent ? `${lastContent}\n\n${note}` : note,
    turns_used: spec.max_turns,
    tools_called: toolsCalled,
    max_turns_reached: true,
  };
}
