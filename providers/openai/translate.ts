import type { CompletionRequest, CompletionResponse, ToolCall } from '../../core/primitives/llm.ts';
import { parseToolArguments as parseArgs } from '../../core/primitives/llm-events.ts';

type OaMessage = Record<string, unknown>;

/** Switchboard messages -> Chat Completions messages (tool results become role `tool` messages). */
export function toOpenAiMessages(req: CompletionRequest): OaMessage[] {
  const out: OaMessage[] = [];
  if (req.system) out.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    if (m.role === 'system') out.push({ role: 'system', content: m.content });
    else if (m.role === 'assistant') {
      const msg: OaMessage = { role: 'assistant', content: m.content || null };
      if (m.tool_calls?.length)
        msg.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        }));
      out.push(msg);
    } else {
      for (const r of m.tool_results ?? []) out.push({ role: 'tool', tool_call_id: r.tool_use_id, content: r.content });
      if (m.content || !m.tool_results?.length) out.push({ role: 'user', content: m.content });
    }
  }
  return out;
}

/** Anthropic-style tool_choice ({type: auto|any|tool|none, name}) in OpenAI's form. */
export function toOpenAiToolChoice(choice: Record<string, unknown> | undefined): unknown {
  if (!choice) return undefined;
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
    case 'required':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
    case 'function':
      return {
        type: 'function',
        function: { name: String(choice.name ?? (choice.function as { name?: string } | undefined)?.name) },
      };
    default:
      return undefined;
  }
}

export function toOpenAiBody(req: CompletionRequest, model: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: req.model ?? model, messages: toOpenAiMessages(req) };
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description ?? '', parameters: t.input_schema },
    }));
  const choice = toOpenAiToolChoice(req.tool_choice);
  if (choice !== undefined && req.tools?.length) body.tool_choice = choice;
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  return body;
}

export const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filter',
};

interface OaChoice {
  message: {
    content?: string | null;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  };
  finish_reason?: string | null;
}

export function fromOpenAiResponse(res: {
  model: string;
  choices: OaChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}): CompletionResponse {
  const choice = res.choices[0];
  const tool_calls: ToolCall[] = (choice?.message.tool_calls ?? []).map((c) => ({
    id: c.id,
    name: c.function.name,
    input: parseArgs(c.function.arguments),
  }));
  return {
    content: choice?.message.content ?? '',
    model: res.model,
    stop_reason: STOP_REASONS[choice?.finish_reason ?? 'stop'] ?? choice?.finish_reason ?? 'end_turn',
    tool_calls,
    usage: { prompt_tokens: res.usage?.prompt_tokens ?? 0, completion_tokens: res.usage?.completion_tokens ?? 0 },
  };
}
