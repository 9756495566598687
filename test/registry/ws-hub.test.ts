import t, { type Test } from 'tap';
import { connect as tcpConnect } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { HealthHub, type HealthEntry } from '../../plugins/registry/health/hub.ts';

/**
 * The hub's ordering and failure rules, with real WebSocket connections and
 * a full-status reader the test controls.
 */

const entry = (status: string): HealthEntry => ({ status, last_checked_iso: new Date(0).toISOString(), num_tools: 1 });

async function hubServer(
  t: Test,
  snapshot: () => Promise<Record<string, HealthEntry>>,
  opts: { max?: number; pingMs?: number } = {},
) {
  const hub = new HealthHub(opts.max ?? 10, snapshot, opts.pingMs ?? 60_000);
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (socket) => void hub.add(socket));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        hub.close();
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return { hub, url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}` };
}

function client(t: Test, url: string) {
  const ws = new WebSocket(url);
  const messages: Array<Record<string, HealthEntry>> = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.on('close', (code, reason) => r({ code, reason: reason.toString() })),
  );
  t.teardown(() => ws.terminate());
  return { ws, messages, closed };
}

async function until(pred: () => boolean, label: string) {
  for (let i = 0; i < 100; i++) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${label}`);
}

t.test('a change that lands while the full status is read is sent after it, not before', async (t) => {
  let release: (v: Record<string, HealthEntry>) => void = () => {};
  const { hub, url } = await hubServer(t, () => new Promise((r) => (release = r)));
  const c = client(t, url);
  await until(() => hub.stats().active_connections === 1, 'socket admitted, full status pending');
  hub.broadcast({ '/a': entry('healthy') });
  release({ '/a': entry('unknown'), '/b': entry('unknown') });
  await until(() => c.messages.length === 2, 'two messages');
  t.same(Object.keys(c.messages[0]).sort(), ['/a', '/b'], 'the full status first');
  t.same(c.messages[1], { '/a': entry('healthy') }, 'then the change, so the newer state wins');
});

t.test('a full status that cannot be read closes the socket with 1011 and frees the slot', async (t) => {
  const { hub, url } = await hubServer(t, async () => {
    throw new Error('store down');
  });
  const c = client(t, url);
  const closed = await c.closed;
  t.equal(closed.code, 1011);
  t.match(closed.reason, /unavailable/);
  t.equal(hub.stats().active_connections, 0);
});

t.test('shutdown closes every client with 1001', async (t) => {
  const { hub, url } = await hubServer(t, async () => ({}));
  const a = client(t, url);
  const b = client(t, url);
  await until(() => a.messages.length === 1 && b.messages.length === 1, 'both admitted');
  hub.close();
  t.same((await a.closed).code, 1001);
  t.same((await b.closed).code, 1001);
  t.equal(hub.stats().active_connections, 0);
});

t.test('a client that stops reading is dropped once its backlog passes the bound', async (t) => {
  const { hub, url } = await hubServer(t, async () => ({}));
  // A raw peer that completes the handshake and then never reads again.
  const u = new URL(url);
  const peer = tcpConnect(Number(u.port), u.hostname);
  t.teardown(() => peer.destroy());
  await new Promise<void>((resolve) => {
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        peer.off('data', onData);
        peer.pause();
        resolve();
      }
    };
    peer.on('data', onData);
    peer.write(
      `GET / HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${Buffer.from('fedcba9876543210').toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
  await until(() => hub.stats().active_connections === 1, 'peer admitted');
  const big = { '/big': { ...entry('healthy'), status: 'x'.repeat(256 * 1024) } };
  for (let i = 0; i < 400 && hub.stats().active_connections > 0; i++) {
    hub.broadcast(big);
    // Let the socket flush what the kernel takes, so only a real backlog counts.
    await new Promise((r) => setImmediate(r));
  }
  t.equal(hub.stats().active_connections, 0, 'the non-reading peer was dropped, not buffered for without bound');
});
