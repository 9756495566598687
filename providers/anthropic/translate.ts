import type { CompletionRequest, CompletionResponse, ToolCall } from '../../core/primitives/llm.ts';

type Block = Record<string, unknown>;
type AnMessage = { role: 'user' | 'assistant'; content: Block[] };

/**
 * Switchboard messages -> Messages API: system text gathered into `system`,
 * tool calls and results as tool_use / tool_result blocks, and consecutive
 * messages of one role merged (the API wants the roles to alternate).
 */
export function toAnthropicBody(req: CompletionRequest, model: string, maxTokens: number): Record<string, unknown> {
  const system: string[] = req.system ? [req.system] : [];
  const messages: AnMessage[] = [];
  const push = (role: AnMessage['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of req.messages) {
    if (m.role === 'system') {
      system.push(m.content);
      continue;
    }
    if (m.role === 'assistant') {
      const blocks: Block[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const c of m.tool_calls ?? []) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
      push('assistant', blocks);
      continue;
    }
    const blocks: Block[] = (m.tool_results ?? []).map((r) => ({
      type: 'tool_result',
      tool_use_id: r.tool_use_id,
      content: r.content,
      ...(r.is_error ? { is_error: true } : {}),
    }));
    if (m.content) blocks.push({ type: 'text', text: m.content });
    push('user', blocks);
  }
  const body: Record<string, unknown> = {
    model: req.model ?? model,
    max_tokens: req.max_tokens ?? maxTokens,
    messages,
  };
  if (system.length) body.system = system.join('\n\n');
  if (req.tools?.length)
    body.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description ?? '',
      input_schema: t.input_schema,
    }));
  if (req.tool_choice && req.tools?.length) body.tool_choice = req.tool_choice;
  if (req.temperature !== undefined) body.temperature = Math.min(1, req.temperature);
  return body;
}

export function fromAnthropicResponse(res: {
  model: string;
  content: Block[];
  stop_reason?: string | null;
  usage?: { input_tokens?: number; output_tokens?: number };
}): CompletionResponse {
  const text = res.content
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text ?? ''))
    .join('');
  const tool_calls: ToolCall[] = res.content
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: String(b.id), name: String(b.name), input: (b.input ?? {}) as Record<string, unknown> }));
  return {
    content: text,
    model: res.model,
    stop_reason: res.stop_reason ?? 'end_turn',
    tool_calls,
    usage: { prompt_tokens: res.usage?.input_tokens ?? 0, completion_tokens: res.usage?.output_tokens ?? 0 },
  };
}
