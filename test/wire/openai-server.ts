import { DEFAULT_TEXT, pieces, sse, startWire, type WireServer } from './common.ts';

/**
 * A local server that speaks the OpenAI Chat Completions wire protocol (plus
 * /v1/models and /v1/embeddings) closely enough for the official SDK.
 */
export function startOpenAiWire(port = 0): Promise<WireServer> {
  let n = 0;
  return startWire(
    (b, req, body, res) => {
      const path = req.url ?? '';
      if (path.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            object: 'list',
            data: [{ id: 'wire-gpt', object: 'model', created: 0, owned_by: 'wire' }],
          }),
        );
        return;
      }
      if (path.endsWith('/embeddings')) {
        const input = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input)];
        // Deterministic toy embedding: letter frequencies, so similar texts are close.
        const vec = (s: string) =>
          Array.from({ length: 26 }, (_, i) => [...s.toLowerCase()].filter((c) => c.charCodeAt(0) - 97 === i).length);
        // The SDK asks for base64 (little-endian float32) unless told otherwise, as the real API allows.
        const encode = (v: number[]) =>
          body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            object: 'list',
            model: body.model,
            data: input.map((s, index) => ({ object: 'embedding', index, embedding: encode(vec(s)) })),
            usage: { prompt_tokens: 1, total_tokens: 1 },
          }),
        );
        return;
      }
      const model = String(body.model ?? 'wire-gpt');
      const id = `chatcmpl-${++n}`;
      const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
      const text = b.kind === 'text' ? b.text : '';
      const call =
        b.kind === 'tool'
          ? {
              id: b.id ?? `call_${n}`,
              type: 'function',
              function: { name: b.name, arguments: JSON.stringify(b.input) },
            }
          : undefined;
      const finish = call ? 'tool_calls' : 'stop';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created: 0,
            model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: call ? null : text, ...(call ? { tool_calls: [call] } : {}) },
                finish_reason: finish,
              },
            ],
            usage,
          }),
        );
        return;
      }
      const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
        data: { id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason }] },
      });
      const events: Array<{ data: unknown }> = [chunk({ role: 'assistant', content: '' })];
      if (call) {
        events.push(
          chunk({
            tool_calls: [
              { index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
            ],
          }),
        );
        for (const p of pieces(call.function.arguments, 5))
          events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
      } else {
        for (const p of pieces(text || DEFAULT_TEXT)) events.push(chunk({ content: p }));
      }
      events.push(chunk({}, finish));
      events.push({ data: { id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage } });
      events.push({ data: '[DONE]' });
      sse(res, events);
    },
    (status, message) => ({
      error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null },
    }),
    port,
  );
}
