/**
 * Server-sent events as the agent chat routes send them: one `data: <json>` line per event, events separated by a
 * blank line (plugins/platform/agents/sse.ts). Read from a fetch body rather than EventSource, because the chat
 * starts with a POST (EventSource only GETs) and a POST carries the CSRF header.
 */

/** Splits SSE text into the JSON payloads of complete events; returns what is left for the next chunk. */
export function parseSseChunk(buffer: string): { events: unknown[]; rest: string } {
  const events: unknown[] = [];
  let rest = buffer.replace(/\r\n/g, '\n');
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (!data) continue; // comments and keep-alives
    try {
      events.push(JSON.parse(data));
    } catch {
      // A line that is not JSON is not one of ours: skip it rather than stop the stream.
    }
  }
  return { events, rest };
}

/** The events of a streamed response body, in order, until the server ends it or `signal` aborts. */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const { events, rest } = parseSseChunk(buffer);
      buffer = rest;
      yield* events;
    }
    const { events } = parseSseChunk(`${buffer}${decoder.decode()}\n\n`);
    yield* events;
  } finally {
    signal?.removeEventListener('abort', stop);
    reader.releaseLock();
  }
}
