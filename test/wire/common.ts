import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readJsonBody } from '../fixtures/json-body.ts';

/** What a wire server answers next (a queue; `text` with the default sentence when empty). */
export type Behaviour =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; name: string; input: Record<string, unknown>; id?: string }
  | { kind: 'status'; status: number; message?: string }
  | { kind: 'hang' };

export interface WireServer {
  url: string;
  /** Every request body the server received, in order. */
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }>;
  enqueue(...b: Behaviour[]): void;
  stop(): Promise<void>;
}

export const DEFAULT_TEXT = 'Hello from the wire server, nice to meet you.';

/**
 * With nothing queued: a request offering tools whose last message is not a
 * tool result gets a call of the first tool; everything else gets text. That
 * is enough for one round of a tool loop.
 */
function defaultBehaviour(body: Record<string, unknown>): Behaviour {
  const tools = body.tools as Array<{ name?: string; function?: { name?: string } }> | undefined;
  const last = JSON.stringify((body.messages as unknown[] | undefined)?.at(-1) ?? {});
  if (tools?.length && !last.includes('"tool_result"') && !last.includes('"role":"tool"')) {
    return { kind: 'tool', name: tools[0].name ?? tools[0].function?.name ?? 'tool', input: { city: 'Paris' } };
  }
  return { kind: 'text', text: DEFAULT_TEXT };
}

/** A loopback HTTP server with a behaviour queue; `handle` speaks one vendor's protocol. */
export async function startWire(
  handle: (b: Behaviour, req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse) => void,
  errorBody: (status: number, message: string) => unknown,
  port = 0,
): Promise<WireServer> {
  const requests: WireServer['requests'] = [];
  const queue: Behaviour[] = [];
  const server: Server = createServer(async (req, res) => {
    const body = req.method === 'POST' ? ((await readJsonBody<Record<string, unknown>>(req)) ?? {}) : {};
    requests.push({ path: req.url ?? '', headers: req.headers, body });
    const b =
      req.url?.includes('/models') || req.url?.includes('/embeddings')
        ? ({ kind: 'text', text: DEFAULT_TEXT } as Behaviour)
        : (queue.shift() ?? defaultBehaviour(body));
    if (b.kind === 'hang') return; // never answers: the client's timeout must fire
    if (b.kind === 'status') {
      res
        .writeHead(b.status, { 'content-type': 'application/json' })
        .end(JSON.stringify(errorBody(b.status, b.message ?? `status ${b.status}`)));
      return;
    }
    handle(b, req, body, res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    requests,
    enqueue: (...b) => queue.push(...b),
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function sse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events)
    res.write(
      `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
    );
  res.end();
}

/** Split a string in pieces of `n` characters (how a model streams). */
export const pieces = (s: string, n = 7) =>
  Array.from({ length: Math.ceil(s.length / n) }, (_, i) => s.slice(i * n, i * n + n));
