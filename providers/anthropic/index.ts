import type { CompletionRequest, LlmProvider, LlmStreamEvent } from '../../core/primitives/llm.ts';
import { llmUpstreamError } from '../../core/primitives/llm-errors.ts';
import type { Health, ProviderFactory } from '../../core/provider.ts';
import { parseToolArguments as parseArgs } from '../../core/primitives/llm-events.ts';
import { fromAnthropicResponse, toAnthropicBody } from './translate.ts';

type Client = import('@anthropic-ai/sdk').default;

/** The Messages API on the official SDK, imported on first use. */
export const anthropicLlm: ProviderFactory<LlmProvider> = {
  type: 'anthropic',
  kind: 'llm',
  description: 'Anthropic Messages API through @anthropic-ai/sdk (options or ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY)',
  create: (name, raw) => {
    const str = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : undefined);
    const baseURL = str('base_url') ?? process.env.ANTHROPIC_BASE_URL;
    const apiKey = str('api_key') ?? process.env.ANTHROPIC_API_KEY;
    const model = str('model') ?? 'claude-sonnet-4-5';
    const maxTokens = typeof raw.max_tokens === 'number' ? raw.max_tokens : 1024;
    const timeout = typeof raw.timeout_ms === 'number' ? raw.timeout_ms : 60000;
    let client: Client | undefined;
    const sdk = async (): Promise<Client> => {
      if (!client) {
        const { default: Anthropic } = await import('@anthropic-ai/sdk');
        client = new Anthropic({ apiKey: apiKey ?? 'unset', baseURL, timeout, maxRetries: 0 });
      }
      return client;
    };
    const fail = (err: unknown) => llmUpstreamError(name, err);

    return {
      name,
      type: 'anthropic',
      kind: 'llm',
      capabilities: { streaming: true, tools: true, models: true, embeddings: false },
      async complete(req, opts) {
        try {
          return fromAnthropicResponse(
            (await (
              await sdk()
            ).messages.create(toAnthropicBody(req, model, maxTokens) as never, { signal: opts?.signal })) as never,
          );
        } catch (err) {
          throw fail(err);
        }
      },
      async *stream(req: CompletionRequest, opts?: { signal?: AbortSignal }): AsyncIterable<LlmStreamEvent> {
        let events: AsyncIterable<Record<string, unknown>>;
        try {
          events = (await (
            await sdk()
          ).messages.create({ ...toAnthropicBody(req, model, maxTokens), stream: true } as never, {
            signal: opts?.signal,
          })) as never;
        } catch (err) {
          throw fail(err);
        }
        const blocks = new Map<number, { id: string; name: string; args: string }>();
        let usedModel = req.model ?? model;
        let stop = 'end_turn';
        const usage = { input_tokens: 0, output_tokens: 0 };
        try {
          for await (const ev of events) {
            switch (ev.type) {
              case 'message_start': {
                const m = ev.message as { model?: string; usage?: { input_tokens?: number; output_tokens?: number } };
                if (m.model) usedModel = m.model;
                usage.input_tokens = m.usage?.input_tokens ?? 0;
                usage.output_tokens = m.usage?.output_tokens ?? 0;
                break;
              }
              case 'content_block_start': {
                const b = ev.content_block as { type: string; id?: string; name?: string; text?: string };
                if (b.type === 'tool_use') {
                  blocks.set(ev.index as number, {
                    id: b.id ?? `toolu_${String(ev.index)}`,
                    name: b.name ?? '',
                    args: '',
                  });
                  yield { type: 'tool_use_start', id: b.id ?? `toolu_${String(ev.index)}`, name: b.name ?? '' };
                } else if (b.type === 'text' && b.text) yield { type: 'content_delta', delta: b.text };
                break;
              }
              case 'content_block_delta': {
                const d = ev.delta as { type: string; text?: string; partial_json?: string };
                if (d.type === 'text_delta' && d.text) yield { type: 'content_delta', delta: d.text };
                else if (d.type === 'input_json_delta' && d.partial_json) {
                  const b = blocks.get(ev.index as number);
                  if (b) {
                    b.args += d.partial_json;
                    yield { type: 'tool_use_delta', id: b.id, delta: d.partial_json };
                  }
                }
                break;
              }
              case 'content_block_stop': {
                const b = blocks.get(ev.index as number);
                if (b) yield { type: 'tool_use_complete', id: b.id, name: b.name, input: parseArgs(b.args) };
                break;
              }
              case 'message_delta': {
                const d = ev.delta as { stop_reason?: string | null };
                if (d.stop_reason) stop = d.stop_reason;
                const u = ev.usage as { output_tokens?: number } | undefined;
                if (u?.output_tokens !== undefined) usage.output_tokens = u.output_tokens;
                break;
              }
            }
          }
        } catch (err) {
          throw fail(err);
        }
        yield { type: 'message_stop', stop_reason: stop, model: usedModel };
        yield { type: 'metadata', usage };
      },
      async models() {
        try {
          const ids: string[] = [];
          for await (const m of (await sdk()).models.list()) ids.push(m.id);
          return ids;
        } catch (err) {
          throw fail(err);
        }
      },
      async healthcheck(): Promise<Health> {
        if (!baseURL && !apiKey) return 'reachable';
        try {
          await (await sdk()).models.list(undefined, { timeout: 3000 });
          return 'ok';
        } catch (err) {
          const status = (err as { status?: number }).status;
          return status === 401 || status === 403 ? 'reachable' : 'down';
        }
      },
      close: async () => {},
    };
  },
};

export const providers: ProviderFactory[] = [anthropicLlm as ProviderFactory];
