/**
 * Milliseconds from sending a JSON POST to the moment the streamed answer read
 * so far first matches `first` (NaN if it never does). The body is read to its
 * end either way, so the keep-alive connection is free for the next sample.
 */
export async function timeToFirstMatch(
  url: string,
  body: unknown,
  first: RegExp,
  headers: Record<string, string> = {},
): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let seen = '';
  let at = NaN;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += dec.decode(value, { stream: true });
    if (Number.isNaN(at) && first.test(seen)) at = performance.now() - t0;
  }
  return at;
}
