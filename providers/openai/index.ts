import type { CompletionRequest, LlmProvider, LlmStreamEvent } from '../../core/primitives/llm.ts';
import { llmUpstreamError } from '../../core/primitives/llm-errors.ts';
import type { Health, ProviderFactory } from '../../core/provider.ts';
import { parseToolArguments as parseArgs } from '../../core/primitives/llm-events.ts';
import { fromOpenAiResponse, STOP_REASONS, toOpenAiBody } from './translate.ts';

interface Options {
  base_url?: string;
  api_key?: string;
  model: string;
  timeout_ms: number;
  embeddings_model: string;
}

function options(o: Record<string, unknown>, env: NodeJS.ProcessEnv): Options {
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  return {
    base_url: str('base_url') ?? env.OPENAI_BASE_URL,
    api_key: str('api_key') ?? env.OPENAI_API_KEY,
    model: str('model') ?? 'gpt-4o-mini',
    timeout_ms: typeof o.timeout_ms === 'number' ? o.timeout_ms : 60000,
    embeddings_model: str('embeddings_model') ?? 'text-embedding-3-small',
  };
}

type Client = import('openai').default;

/** Chat Completions on the official SDK; the SDK is imported on first use, not at startup. */
export const openaiLlm: ProviderFactory<LlmProvider> = {
  type: 'openai',
  kind: 'llm',
  description:
    'Any OpenAI-compatible server through the official openai SDK (options or OPENAI_BASE_URL / OPENAI_API_KEY)',
  create: (name, raw) => {
    const o = options(raw, process.env);
    let client: Client | undefined;
    const sdk = async (): Promise<Client> => {
      if (!client) {
        const { default: OpenAI } = await import('openai');
        // Retries are the caller's decision (an agent loop, a user): the gateway answers fast and says why.
        client = new OpenAI({
          apiKey: o.api_key ?? 'unset',
          baseURL: o.base_url,
          timeout: o.timeout_ms,
          maxRetries: 0,
        });
      }
      return client;
    };
    const fail = (err: unknown) => llmUpstreamError(name, err);

    return {
      name,
      type: 'openai',
      kind: 'llm',
      capabilities: { streaming: true, tools: true, models: true, embeddings: true },
      async complete(req, opts) {
        try {
          const res = await (await sdk()).chat.completions.create(toOpenAiBody(req, o.model) as never, {
            signal: opts?.signal,
          });
          return fromOpenAiResponse(res as never);
        } catch (err) {
          throw fail(err);
        }
      },
      async *stream(req: CompletionRequest, opts?: { signal?: AbortSignal }): AsyncIterable<LlmStreamEvent> {
        let stream: AsyncIterable<Record<string, unknown>>;
        try {
          stream = (await (
            await sdk()
          ).chat.completions.create(
            { ...toOpenAiBody(req, o.model), stream: true, stream_options: { include_usage: true } } as never,
            { signal: opts?.signal },
          )) as never;
        } catch (err) {
          throw fail(err);
        }
        const calls = new Map<number, { id: string; name: string; args: string }>();
        let model = req.model ?? o.model;
        let stop: string | undefined;
        let usage: { input_tokens: number; output_tokens: number } | undefined;
        try {
          for await (const chunk of stream) {
            if (typeof chunk.model === 'string') model = chunk.model;
            const u = chunk.usage as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
            if (u) usage = { input_tokens: u.prompt_tokens ?? 0, output_tokens: u.completion_tokens ?? 0 };
            for (const choice of (chunk.choices as Array<{
              delta?: Record<string, unknown>;
              finish_reason?: string | null;
            }>) ?? []) {
              const delta = choice.delta ?? {};
              if (typeof delta.content === 'string' && delta.content)
                yield { type: 'content_delta', delta: delta.content };
              for (const tc of (delta.tool_calls as Array<{
                index: number;
                id?: string;
                function?: { name?: string; arguments?: string };
              }>) ?? []) {
                let call = calls.get(tc.index);
                if (!call) {
                  call = { id: tc.id ?? `call_${tc.index}`, name: tc.function?.name ?? '', args: '' };
                  calls.set(tc.index, call);
                  yield { type: 'tool_use_start', id: call.id, name: call.name };
                }
                if (tc.function?.arguments) {
                  call.args += tc.function.arguments;
                  yield { type: 'tool_use_delta', id: call.id, delta: tc.function.arguments };
                }
              }
              if (choice.finish_reason) stop = choice.finish_reason;
            }
          }
        } catch (err) {
          throw fail(err);
        }
        for (const call of calls.values())
          yield { type: 'tool_use_complete', id: call.id, name: call.name, input: parseArgs(call.args) };
        yield { type: 'message_stop', stop_reason: STOP_REASONS[stop ?? 'stop'] ?? stop ?? 'end_turn', model };
        yield { type: 'metadata', usage: usage ?? { input_tokens: 0, output_tokens: 0 } };
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
      async embed(texts, opts) {
        try {
          const res = await (await sdk()).embeddings.create({ model: opts?.model ?? o.embeddings_model, input: texts });
          return res.data.sort((a, b) => a.index - b.index).map((d) => d.embedding as number[]);
        } catch (err) {
          throw fail(err);
        }
      },
      async healthcheck(): Promise<Health> {
        if (!o.base_url && !o.api_key) return 'reachable';
        try {
          await (await sdk()).models.list({ timeout: 3000 });
          return 'ok';
        } catch (err) {
          const status = (err as { status?: number }).status;
          // Up but refusing our key: the server is there, credentials are needed.
          return status === 401 || status === 403 ? 'reachable' : 'down';
        }
      },
      close: async () => {},
    };
  },
};

export const providers: ProviderFactory[] = [openaiLlm as ProviderFactory];
