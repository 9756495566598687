import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseStream {
  send(event: object): void;
  end(): void;
  /** Aborted when the client goes away. */
  closed: AbortSignal;
}

/** Take over the response for `text/event-stream`; each event is one `data: <json>` line. */
export function openSse(request: FastifyRequest, reply: FastifyReply): SseStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': String(request.id),
  });
  const controller = new AbortController();
  raw.on('close', () => controller.abort());
  const open = () => !raw.writableEnded && !raw.destroyed;
  return {
    send(event) {
      if (open()) raw.write(`data: ${JSON.stringify(event)}\n\n`);
    },
    end() {
      if (open()) raw.end();
    },
    closed: controller.signal,
  };
}
