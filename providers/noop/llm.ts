import type { CompletionRequest, CompletionResponse, LlmProvider, LlmStreamEvent } from '../../core/primitives/llm.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { completionEvents } from '../../core/primitives/llm-events.ts';

/** The text of the last user message, or '' when there is none. */
function lastUserText(req: CompletionRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--)
    if (req.messages[i].role === 'user' && req.messages[i].content) return req.messages[i].content;
  return '';
}

/**
 * The noop LLM answers deterministically, without a model: `noop: <the last
 * user message>`, never calling a tool. Documented so tests and demos can rely on it.
 * It takes requests that offer tools (capability `tools`) and answers them the
 * same way, as a model that chooses not to call one would: clients written for
 * the reference gateway send tools to whatever model is configured.
 */
export const noopLlm: ProviderFactory<LlmProvider> = {
  type: 'noop',
  kind: 'llm',
  autoInstance: true,
  description: 'Echoes the last user message as "noop: <message>"; no tool calls',
  create: (name) => {
    const complete = async (req: CompletionRequest): Promise<CompletionResponse> => {
      const content = `noop: ${lastUserText(req)}`;
      return {
        content,
        model: req.model ?? 'noop',
        stop_reason: 'end_turn',
        tool_calls: [],
        usage: { prompt_tokens: 0, completion_tokens: 0 },
      };
    };
    return {
      name,
      type: 'noop',
      kind: 'llm',
      capabilities: { streaming: true, tools: true, models: true, embeddings: false },
      complete,
      async *stream(req: CompletionRequest): AsyncIterable<LlmStreamEvent> {
        yield* completionEvents(await complete(req));
      },
      models: async () => ['noop'],
      healthcheck: async () => 'ok',
      close: async () => {},
    };
  },
};
