import type {
  ChatMessage,
  CompletionRequest,
  CompletionResponse,
  LlmProvider,
  LlmStreamEvent,
} from '../../core/primitives/llm.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { completionEvents } from '../../core/primitives/llm-events.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { loadScript, turnsOf, type ScriptEntry } from './script.ts';

const isHuman = (m: ChatMessage) => m.role === 'user' && !(m.tool_results && m.tool_results.length > 0);

function pick(
  script: ScriptEntry[],
  messages: ChatMessage[],
): { entry: ScriptEntry; turn: number; human: string; toolResult: string } {
  let h = messages.length - 1;
  while (h >= 0 && !isHuman(messages[h])) h--;
  const human = h >= 0 ? messages[h].content : '';
  const turn = messages.slice(h + 1).filter((m) => m.role === 'assistant').length;
  let toolResult = '';
  for (let i = messages.length - 1; i > h && !toolResult; i--) {
    const tr = messages[i].tool_results;
    if (tr?.length) toolResult = tr.map((r) => r.content).join('\n');
    else if (messages[i].role === 'tool') toolResult = messages[i].content;
  }
  const entry =
    script.find((e) => e.match !== undefined && new RegExp(e.match, 'i').test(human)) ??
    script.find((e) => e.match === undefined);
  if (!entry) throw new Error(`the script has no entry for "${human.slice(0, 80)}" and no default entry`);
  return { entry, turn, human, toolResult };
}

const words = (s: string) => (s.match(/\S+/g) ?? []).length;

export const scriptedLlm: ProviderFactory<LlmProvider> = {
  type: 'scripted',
  kind: 'llm',
  description: 'Replays a script of answers and tool calls (see providers/scripted/script.ts)',
  create: (name, options) => {
    const script = loadScript(options);
    const model = typeof options.model === 'string' ? options.model : 'scripted';
    const delayMs = typeof options.delay_ms === 'number' ? options.delay_ms : 0;
    // Spacing between streamed events, so disconnects and cancels can land mid-answer.
    const chunkDelayMs = typeof options.chunk_delay_ms === 'number' ? options.chunk_delay_ms : 0;
    let calls = 0;
    const complete = async (req: CompletionRequest, opts?: { signal?: AbortSignal }): Promise<CompletionResponse> => {
      // A real model call ends when its caller gives up; so does the wait standing in for one.
      if (delayMs) await sleep(delayMs, undefined, { signal: opts?.signal }).catch(() => {});
      opts?.signal?.throwIfAborted();
      const { entry, turn, human, toolResult } = pick(script, req.messages);
      const turns = turnsOf(entry);
      const t = turns[Math.min(turn, turns.length - 1)];
      const fill = (s: string) => s.replaceAll('{{user}}', human).replaceAll('{{tool_result}}', toolResult);
      const tool_calls = (t.tool_calls ?? []).map((c, i) => ({
        id: c.id ?? `call_${++calls}_${i}`,
        name: c.name,
        input: JSON.parse(fill(JSON.stringify(c.input ?? {}))) as Record<string, unknown>,
      }));
      const content = fill(t.content ?? '');
      const prompt = req.messages.reduce((n, m) => n + words(m.content), words(req.system ?? ''));
      return {
        content,
        model: req.model ?? model,
        stop_reason: t.stop_reason ?? (tool_calls.length ? 'tool_use' : 'end_turn'),
        tool_calls,
        usage: { prompt_tokens: prompt, completion_tokens: words(content) },
      };
    };
    return {
      name,
      type: 'scripted',
      kind: 'llm',
      capabilities: { streaming: true, tools: true, models: true, embeddings: false },
      complete,
      async *stream(req: CompletionRequest, opts?: { signal?: AbortSignal }): AsyncIterable<LlmStreamEvent> {
        for (const e of completionEvents(await complete(req, opts), 8)) {
          opts?.signal?.throwIfAborted();
          yield e;
          if (chunkDelayMs) await new Promise((r) => setTimeout(r, chunkDelayMs));
        }
      },
      models: async () => [model],
      healthcheck: async () => 'ok',
      close: async () => {},
    };
  },
};

export const providers: ProviderFactory[] = [scriptedLlm as ProviderFactory];
