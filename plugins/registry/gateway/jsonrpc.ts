/** The parts of MCP's JSON-RPC traffic the gateway needs to read: methods, tool names, tools/list results. */
export interface RpcCall {
  method: string;
  /** `params.name` of a tools/call. */
  tool?: string;
  id?: string | number | null;
}

/** Requests and notifications in a body (a single message or a batch); responses carry no method. */
export function rpcCalls(body: unknown): RpcCall[] {
  const items = Array.isArray(body) ? body : [body];
  const calls: RpcCall[] = [];
  for (const m of items) {
    if (!m || typeof m !== 'object' || typeof (m as { method?: unknown }).method !== 'string') continue;
    const msg = m as { method: string; params?: { name?: unknown }; id?: string | number | null };
    calls.push({
      method: msg.method,
      tool: msg.method === 'tools/call' && typeof msg.params?.name === 'string' ? msg.params.name : undefined,
      id: msg.id,
    });
  }
  return calls;
}

type Msg = { id?: unknown; result?: { tools?: Array<{ name?: unknown }> } };

function filterMessage(msg: unknown, listIds: Set<unknown>, allowed: (tool: string) => boolean): unknown {
  if (!msg || typeof msg !== 'object') return msg;
  const m = msg as Msg;
  if (!listIds.has(m.id) || !Array.isArray(m.result?.tools)) return msg;
  return {
    ...m,
    result: { ...m.result, tools: m.result!.tools!.filter((t) => typeof t.name === 'string' && allowed(t.name)) },
  };
}

/** Drop tools the caller may not call from tools/list results in a JSON body. */
export function filterToolsJson(text: string, listIds: Set<unknown>, allowed: (tool: string) => boolean): string {
  const parsed = JSON.parse(text) as unknown;
  const out = Array.isArray(parsed)
    ? parsed.map((m) => filterMessage(m, listIds, allowed))
    : filterMessage(parsed, listIds, allowed);
  return JSON.stringify(out);
}

/**
 * The same for an SSE body. The `data:` lines of one event, joined with
 * newlines as SSE clients join them, are one JSON-RPC message: filtering line
 * by line let a message split over several lines through unfiltered.
 */
export function filterToolsSse(
  text: string,
  listIds: Set<unknown>,
  allowed: (tool: string) => boolean,
  forget = false,
): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n\n')
    .map((event) => filterSseEvent(event, listIds, allowed, forget))
    .join('\n\n');
}

function filterSseEvent(
  event: string,
  listIds: Set<unknown>,
  allowed: (tool: string) => boolean,
  forget: boolean,
): string {
  const lines = event.split('\n');
  const first = lines.findIndex((l) => l.startsWith('data:'));
  if (first < 0) return event;
  const payload = lines
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).replace(/^ /, ''))
    .join('\n');
  let msg: unknown;
  try {
    msg = JSON.parse(payload);
  } catch {
    // Not JSON to us means not JSON to the client either: nothing it could read as a tool list.
    return event;
  }
  const out = Array.isArray(msg)
    ? msg.map((m) => filterMessage(m, listIds, allowed))
    : filterMessage(msg, listIds, allowed);
  // On a long-lived SSE stream each id is answered once; forgetting it keeps the set small.
  if (forget)
    for (const m of Array.isArray(msg) ? msg : [msg])
      if (m && typeof m === 'object' && ('result' in m || 'error' in m)) listIds.delete((m as { id?: unknown }).id);
  const rest = lines.filter((l, i) => i < first || !l.startsWith('data:'));
  rest.splice(first, 0, `data: ${JSON.stringify(out)}`);
  return rest.join('\n');
}
