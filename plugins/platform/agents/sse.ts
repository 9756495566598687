import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseStream {
  send(event: object): void;
  end(): void;
  /** Aborted when the client goes away. */
  closed: AbortSignal;
}

/** Open event streams of one app, so shutdown can end them instead of waiting for clients. */
export class SseStreams {
  /** Sockets, not responses: an ended stream whose client stopped reading still holds its socket. */
  private readonly open = new Set<Socket>();

  /** Take over the response for `text/event-stream`; each event is one `data: <json>` line. */
  start(request: FastifyRequest, reply: FastifyReply): SseStream {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      // One stream per connection: when the stream ends the socket goes too.
      connection: 'close',
      'x-accel-buffering': 'no',
      'x-request-id': String(request.id),
    });
    const socket = raw.socket;
    if (socket) {
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
    }
    const controller = new AbortController();
    raw.on('close', () => controller.abort());
    const writable = () => !raw.writableEnded && !raw.destroyed;
    return {
      send(event) {
        if (writable()) raw.write(`data: ${JSON.stringify(event)}\n\n`);
      },
      end() {
        if (writable()) raw.end();
      },
      closed: controller.signal,
    };
  }

  closeAll(): void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }
}
