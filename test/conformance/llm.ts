import type { CompletionRequest, LlmProvider, LlmStreamEvent } from '../../core/primitives/llm.ts';
import { caseRunner, type Runner, type SuiteOptions } from './kit.ts';

export interface LlmSuiteOptions extends SuiteOptions<LlmProvider> {
  /** A request the provider answers with plain text. */
  textRequest: CompletionRequest;
  /** A request the provider answers with a call of `toolName` (for providers with tools). */
  toolRequest?: CompletionRequest;
  toolName?: string;
}

const STREAM_TYPES = new Set([
  'content_delta',
  'tool_use_start',
  'tool_use_delta',
  'tool_use_complete',
  'message_stop',
  'metadata',
]);

async function collect(it: AsyncIterable<LlmStreamEvent>): Promise<LlmStreamEvent[]> {
  const out: LlmStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** The LLM conformance suite: the completion shape and the spec-6 stream, for any provider. */
export async function llmConformance(t: Runner, opts: LlmSuiteOptions): Promise<void> {
  const it = caseRunner(t, opts);

  await it('a completion has content, model, stop_reason, tool_calls and usage', async (t, llm) => {
    const r = await llm.complete(opts.textRequest);
    t.equal(typeof r.content, 'string');
    t.ok(r.content.length > 0, 'some text');
    t.equal(typeof r.model, 'string');
    t.equal(typeof r.stop_reason, 'string');
    t.same(r.tool_calls, []);
    t.ok(Number.isInteger(r.usage.prompt_tokens) && Number.isInteger(r.usage.completion_tokens));
  });

  await it('the stream uses only spec-6 event types and ends with message_stop then metadata', async (t, llm) => {
    const events = await collect(llm.stream(opts.textRequest));
    t.ok(
      events.every((e) => STREAM_TYPES.has(e.type)),
      'only spec-6 types',
    );
    const text = events
      .filter((e) => e.type === 'content_delta')
      .map((e) => (e as { delta: string }).delta)
      .join('');
    t.ok(text.length > 0, 'text arrives in deltas');
    t.ok(events.some((e) => e.type === 'message_stop'));
    t.equal(events.at(-1)?.type, 'metadata');
  });

  await it('a tool call is returned with parsed input and streamed as start, deltas, complete', async (t, llm) => {
    const r = await llm.complete(opts.toolRequest!);
    const call = r.tool_calls.find((c) => c.name === opts.toolName);
    t.ok(call, `the model calls ${opts.toolName}`);
    t.equal(typeof call!.id, 'string');
    t.equal(typeof call!.input, 'object');
    const events = await collect(llm.stream(opts.toolRequest!));
    const start = events.find((e) => e.type === 'tool_use_start') as { id: string; name: string } | undefined;
    const complete = events.find((e) => e.type === 'tool_use_complete') as { id: string; input: unknown } | undefined;
    t.equal(start?.name, opts.toolName);
    t.equal(complete?.id, start?.id, 'complete names the started call');
    const args = events
      .filter((e) => e.type === 'tool_use_delta' && e.id === start?.id)
      .map((e) => (e as { delta: string }).delta)
      .join('');
    t.same(JSON.parse(args || '{}'), complete?.input, 'argument deltas add up to the parsed input');
  });

  await it('models lists at least one id', async (t, llm) => {
    const models = await llm.models();
    t.ok(models.length > 0 && models.every((m) => typeof m === 'string'));
  });

  await it('healthcheck answers a known state', async (t, llm) => {
    t.ok(['ok', 'reachable', 'down'].includes(await llm.healthcheck()));
  });
}
