import { signal } from '@preact/signals';

/** One entry of the registry's health broadcast (ANCHOR-FACTS: `{"<path>": {status, last_checked_iso, num_tools}}`). */
export interface HealthEntry {
  status: string;
  last_checked_iso: string | null;
  num_tools: number;
}

/** Health by server path, as the WebSocket last said; pages merge it over what they loaded. */
export const health = signal<Record<string, HealthEntry>>({});
export const feedState = signal<'connecting' | 'live' | 'offline'>('connecting');

let socket: WebSocket | undefined;
let retry = 0;
let pinger: ReturnType<typeof setInterval> | undefined;

/**
 * Opens the feed once for the whole console (GET /api/health/ws/health_status upgraded, with the session
 * cookie). On a drop it reconnects with a growing delay; the full status comes again on every connect.
 */
export function startHealthFeed(): void {
  if (socket) return;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/health/ws/health_status`;
  const ws = new WebSocket(url);
  socket = ws;
  feedState.value = 'connecting';
  ws.onopen = () => {
    retry = 0;
    feedState.value = 'live';
    // Browsers cannot send protocol pings; the hub answers an application "ping", which keeps proxies from
    // closing an idle connection.
    pinger = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('ping'), 25_000);
  };
  ws.onmessage = (e) => {
    if (e.data === 'pong') return;
    let msg: Record<string, HealthEntry>;
    try {
      msg = JSON.parse(String(e.data));
    } catch {
      return;
    }
    // The detail page's history is the registry's stored one (GET .../health/history), not kept here.
    health.value = { ...health.value, ...msg };
  };
  ws.onclose = () => {
    clearInterval(pinger);
    socket = undefined;
    feedState.value = 'offline';
    retry = Math.min(retry + 1, 6);
    setTimeout(startHealthFeed, 500 * 2 ** retry);
  };
}

/** The four states lists show (ANCHOR-FACTS collapses the detailed values to these). */
export function healthClass(
  status: string,
): 'healthy' | 'unhealthy' | 'disabled' | 'unknown' | 'checking' | 'auth-expired' {
  if (status === 'healthy') return 'healthy';
  if (status.includes('auth-expired')) return 'auth-expired';
  if (status.startsWith('unhealthy')) return 'unhealthy';
  if (status === 'disabled') return 'disabled';
  if (status === 'checking') return 'checking';
  return 'unknown';
}

export function HealthBadge(props: { status: string }) {
  const c = healthClass(props.status);
  return (
    <span class={`badge ${c}`} data-health={c} title={props.status}>
      {props.status}
    </span>
  );
}
