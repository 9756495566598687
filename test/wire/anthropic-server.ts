import { DEFAULT_TEXT, pieces, sse, startWire, type WireServer } from './common.ts';

/** A local server that speaks the Anthropic Messages wire protocol (plus /v1/models) for the official SDK. */
export function startAnthropicWire(port = 0): Promise<WireServer> {
  let n = 0;
  return startWire(
    (b, req, body, res) => {
      if ((req.url ?? '').includes('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            data: [
              { type: 'model', id: 'wire-claude', display_name: 'Wire Claude', created_at: '2026-01-01T00:00:00Z' },
            ],
            has_more: false,
            first_id: 'wire-claude',
            last_id: 'wire-claude',
          }),
        );
        return;
      }
      const model = String(body.model ?? 'wire-claude');
      const id = `msg_${++n}`;
      const text = b.kind === 'text' ? b.text : '';
      const tool =
        b.kind === 'tool' ? { type: 'tool_use', id: b.id ?? `toolu_${n}`, name: b.name, input: b.input } : undefined;
      const stop = tool ? 'tool_use' : 'end_turn';
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            type: 'message',
            role: 'assistant',
            model,
            content: tool ? [tool] : [{ type: 'text', text }],
            stop_reason: stop,
            stop_sequence: null,
            usage: { input_tokens: 13, output_tokens: 9 },
          }),
        );
        return;
      }
      const events: Array<{ event: string; data: unknown }> = [
        {
          event: 'message_start',
          data: {
            type: 'message_start',
            message: {
              id,
              type: 'message',
              role: 'assistant',
              model,
              content: [],
              stop_reason: null,
              stop_sequence: null,
              usage: { input_tokens: 13, output_tokens: 1 },
            },
          },
        },
      ];
      if (tool) {
        events.push({
          event: 'content_block_start',
          data: {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} },
          },
        });
        for (const p of pieces(JSON.stringify(tool.input), 5))
          events.push({
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: p } },
          });
      } else {
        events.push({
          event: 'content_block_start',
          data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        });
        for (const p of pieces(text || DEFAULT_TEXT))
          events.push({
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: p } },
          });
      }
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } });
      events.push({
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } },
      });
      events.push({ event: 'message_stop', data: { type: 'message_stop' } });
      sse(res, events);
    },
    (status, message) => ({
      type: 'error',
      error: { type: status === 529 ? 'overloaded_error' : status === 429 ? 'rate_limit_error' : 'api_error', message },
    }),
    port,
  );
}
