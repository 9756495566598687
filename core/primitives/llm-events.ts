import type { CompletionResponse, LlmStreamEvent } from './llm.ts';

/**
 * The stream events (spec 6) of a finished completion, for providers that
 * compute the whole answer first: text in small deltas, then each tool call
 * as start / argument deltas / complete, then message_stop and metadata.
 */
export function* completionEvents(res: CompletionResponse, chunk = 16): Generator<LlmStreamEvent> {
  for (let i = 0; i < res.content.length; i += chunk)
    yield { type: 'content_delta', delta: res.content.slice(i, i + chunk) };
  for (const call of res.tool_calls) {
    yield { type: 'tool_use_start', id: call.id, name: call.name };
    const args = JSON.stringify(call.input);
    for (let i = 0; i < args.length; i += chunk)
      yield { type: 'tool_use_delta', id: call.id, delta: args.slice(i, i + chunk) };
    yield { type: 'tool_use_complete', id: call.id, name: call.name, input: call.input };
  }
  yield { type: 'message_stop', stop_reason: res.stop_reason, model: res.model };
  yield {
    type: 'metadata',
    usage: { input_tokens: res.usage.prompt_tokens, output_tokens: res.usage.completion_tokens },
  };
}

/** Rebuild a completion from stream events (for callers that stream but need the whole answer). */
export async function collectStream(events: AsyncIterable<LlmStreamEvent>, model: string): Promise<CompletionResponse> {
  const res: CompletionResponse = {
    content: '',
    model,
    stop_reason: 'end_turn',
    tool_calls: [],
    usage: { prompt_tokens: 0, completion_tokens: 0 },
  };
  for await (const e of events) {
    if (e.type === 'content_delta') res.content += e.delta;
    else if (e.type === 'tool_use_complete') res.tool_calls.push({ id: e.id, name: e.name, input: e.input });
    else if (e.type === 'message_stop') {
      res.stop_reason = e.stop_reason;
      res.model = e.model;
    } else if (e.type === 'metadata')
      res.usage = { prompt_tokens: e.usage.input_tokens, completion_tokens: e.usage.output_tokens };
  }
  return res;
}

/** Tool-call arguments as streamed JSON text -> the input object. */
export function parseToolArguments(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    // A model that emits broken JSON still gets its call through; the tool sees the raw text.
    return { _raw: text };
  }
}
