import t, { type Test } from 'tap';
import { connect as tcpConnect, type Socket } from 'node:net';
import WebSocket from 'ws';
import type { FastifyInstance } from 'fastify';
import { makeApp } from '../helpers/app.ts';
import { adminSession, asUser } from '../helpers/registry-auth.ts';
import { freePort } from '../mcp/servers.ts';

/**
 * The live health feed over WebSocket (spec 4.8, 4.9, 6): snapshot then
 * changes, the session-only path, the connection cap and ping/pong keep-alive.
 */

type Entry = { status: string; last_checked_iso: string | null; num_tools: number };
type Message = Record<string, Entry>;

async function listening(t: Test, health: Record<string, unknown> = {}) {
  const app = await makeApp(t, { registry: { health: { interval_seconds: 0, timeout_seconds: 1, ...health } } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  // Client pools can leave request-less connections that Node's close would wait a minute for (teardowns are LIFO).
  t.teardown(() => app.server.closeAllConnections());
  const ws = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { app, ws };
}

/** A client that keeps every message and every close; `until(pred)` waits for a matching message. */
function feed(t: Test, url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const messages: Message[] = [];
  const texts: string[] = [];
  let wake: () => void = () => {};
  ws.on('message', (d) => {
    const text = d.toString();
    texts.push(text);
    if (text.startsWith('{')) messages.push(JSON.parse(text) as Message);
    wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('error', () => {});
  t.teardown(() => ws.close());
  const until = async <T>(pred: () => T | undefined, label: string): Promise<T> => {
    for (let waited = 0; ; waited += 100) {
      const hit = pred();
      if (hit !== undefined) return hit;
      if (waited > 10_000) throw new Error(`no WebSocket message for: ${label}; saw ${JSON.stringify(texts)}`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 100);
      });
    }
  };
  return { ws, messages, texts, closed, until };
}

// The stats need credentials like every registry API (issue 13).
const stats = async (app: FastifyInstance) =>
  (
    await app.inject({
      method: 'GET',
      url: '/api/health/ws/stats',
      headers: await asUser(app, ['mcp-registry-user'], 'stats-reader'),
    })
  ).json() as {
    active_connections: number;
    total_messages_sent: number;
    uptime_seconds: number;
  };

async function statsUntil(
  app: FastifyInstance,
  pred: (s: Awaited<ReturnType<typeof stats>>) => boolean,
  label: string,
) {
  for (let i = 0; i < 100; i++) {
    const s = await stats(app);
    if (pred(s)) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`stats never reached: ${label}; last ${JSON.stringify(await stats(app))}`);
}

function isEntry(e: unknown): e is Entry {
  if (!e || typeof e !== 'object') return false;
  const x = e as Entry;
  return (
    typeof x.status === 'string' &&
    (x.last_checked_iso === null || !Number.isNaN(Date.parse(x.last_checked_iso))) &&
    Number.isInteger(x.num_tools)
  );
}

t.test('full status on connect, then a message on every change, keyed by service path', async (t) => {
  const { app, ws } = await listening(t);
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const down = await freePort();
  const reg = (path: string) =>
    app.inject({
      method: 'POST',
      url: '/api/servers/register',
      headers: admin,
      payload: { name: path.slice(1), description: 'd', path, proxy_pass_url: `http://127.0.0.1:${down}` },
    });
  t.equal((await reg('/first')).statusCode, 201);
  await app.inject({ method: 'POST', url: '/api/servers/first/refresh', headers: admin });

  const client = feed(t, `${ws}/ws/health_status`);
  const first = await client.until(() => client.messages[0], 'snapshot');
  t.same(Object.keys(first), ['/first'], 'the snapshot holds every server');
  t.ok(isEntry(first['/first']), 'status, last_checked_iso and num_tools');
  t.match(first['/first'].status, /^unhealthy: connection error/);
  t.ok(first['/first'].last_checked_iso, 'checked servers carry the check time');

  // A new server: its entry arrives alone, keyed by its path, and again once checked.
  t.equal((await reg('/second')).statusCode, 201);
  const checked = await client.until(
    () => client.messages.find((m) => m['/second']?.status.startsWith('unhealthy')),
    'second checked',
  );
  t.same(Object.keys(checked), ['/second'], 'a change message carries only what changed');
  t.ok(isEntry(checked['/second']));
  t.ok(checked['/second'].last_checked_iso);

  const off = await app.inject({
    method: 'POST',
    url: '/api/servers/toggle',
    headers: admin,
    payload: { path: '/first', new_state: false },
  });
  t.equal(off.statusCode, 200, off.body);
  const disabled = await client.until(
    () => client.messages.find((m) => m['/first']?.status === 'disabled'),
    'disabled',
  );
  t.ok(isEntry(disabled['/first']));
  t.notOk(
    client.texts.some((x) => /credential|password|secret/i.test(x)),
    'no secrets on the feed',
  );
});

t.test('the session path admits a logged-in browser and refuses one without the cookie', async (t) => {
  const { app, ws } = await listening(t);
  const without = feed(t, `${ws}/api/health/ws/health_status`);
  const refused = await without.closed;
  t.equal(refused.code, 4401, 'closed with the unauthenticated code');
  t.match(refused.reason, /session/, 'and a reason saying what is missing');
  t.equal(without.messages.length, 0, 'nothing was sent before the refusal');

  const forged = feed(t, `${ws}/api/health/ws/health_status`, { cookie: 'mcp_gateway_session=forged' });
  t.equal((await forged.closed).code, 4401, 'a forged cookie is no session');

  const { cookie } = await adminSession(app);
  const admitted = feed(t, `${ws}/api/health/ws/health_status`, { cookie });
  const snap = await admitted.until(() => admitted.messages[0], 'snapshot with a session');
  t.same(snap, {}, 'the (empty) full status arrives');
  t.equal(admitted.ws.readyState, WebSocket.OPEN, 'and the socket stays open');
  admitted.ws.send('ping');
  await admitted.until(() => (admitted.texts.includes('pong') ? true : undefined), 'application-level pong');
  t.pass('an application-level ping is answered');
});

t.test('the connection cap closes the extra connection with 1013 and a reason; freed slots are reusable', async (t) => {
  const { app, ws } = await listening(t, { max_ws_connections: 2 });
  const a = feed(t, `${ws}/ws/health_status`);
  const b = feed(t, `${ws}/ws/health_status`);
  await a.until(() => a.messages[0], 'a admitted');
  await b.until(() => b.messages[0], 'b admitted');
  const c = feed(t, `${ws}/ws/health_status`);
  const closed = await c.closed;
  t.equal(closed.code, 1013, 'try again later');
  t.match(closed.reason, /too many/);
  t.equal(c.messages.length, 0, 'the refused connection got no status');
  t.equal((await stats(app)).active_connections, 2, 'the refused one is not counted');

  a.ws.close();
  await a.closed;
  await statsUntil(app, (s) => s.active_connections === 1, 'a slot freed');
  const d = feed(t, `${ws}/ws/health_status`);
  await d.until(() => d.messages[0], 'd admitted after a left');
  t.equal(d.ws.readyState, WebSocket.OPEN);
});

/**
 * A WebSocket peer that completes the handshake and then never answers
 * anything, pings included (the `ws` client always answers them). Records the
 * opcodes of the frames it receives and when its connection ends.
 */
function silentPeer(url: URL) {
  const socket: Socket = tcpConnect(Number(url.port), url.hostname);
  const opcodes: number[] = [];
  let buf = Buffer.alloc(0);
  let upgraded = false;
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const open = new Promise<void>((resolve, reject) => {
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head));
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve();
      }
      // Server frames are unmasked: opcode, then a 7-bit, 16-bit or 64-bit length.
      while (buf.length >= 2) {
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        opcodes.push(buf[0] & 0x0f);
        buf = buf.subarray(off + len);
      }
    });
    socket.once('error', reject);
  });
  socket.write(
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  return { socket, opcodes, open, ended };
}

t.test('keep-alive: a peer that stops answering pings is dropped; stats follow connects and disconnects', async (t) => {
  // Short enough for a quick test, long enough that a busy test process still answers in time.
  const { app, ws } = await listening(t, { ws_ping_seconds: 0.5 });
  const idle = await stats(app);
  t.equal(idle.active_connections, 0);
  t.ok(Number.isInteger(idle.uptime_seconds) && idle.uptime_seconds >= 0, 'uptime_seconds present');

  const healthy = feed(t, `${ws}/ws/health_status`);
  await healthy.until(() => healthy.messages[0], 'healthy admitted');
  const one = await stats(app);
  t.equal(one.active_connections, 1, 'a connection counts');
  t.ok(one.total_messages_sent >= idle.total_messages_sent + 1, 'the snapshot was counted as sent');

  const silent = silentPeer(new URL(`${ws}/ws/health_status`));
  t.teardown(() => silent.socket.destroy());
  await silent.open;
  await statsUntil(app, (s) => s.active_connections === 2, 'silent peer admitted');
  await silent.ended;
  t.ok(silent.opcodes.includes(0x9), 'the server pinged the silent peer before dropping it');
  t.ok(silent.opcodes.includes(0x1), 'it had received the snapshot');
  await statsUntil(app, (s) => s.active_connections === 1, 'silent peer dropped');
  t.equal(healthy.ws.readyState, WebSocket.OPEN, 'a peer that answers pings stays connected across the same sweeps');

  const sentBefore = (await stats(app)).total_messages_sent;
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  const reg = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { name: 'x', description: 'd', path: '/x', proxy_pass_url: `http://127.0.0.1:${await freePort()}` },
  });
  t.equal(reg.statusCode, 201, reg.body);
  await healthy.until(() => healthy.messages.find((m) => m['/x']), 'change broadcast');
  t.ok((await stats(app)).total_messages_sent > sentBefore, 'broadcasts are counted');

  healthy.ws.close(1000, 'bye');
  await healthy.closed;
  await statsUntil(app, (s) => s.active_connections === 0, 'clean disconnect');
  t.pass('a clean disconnect decrements active_connections');
});

t.test(
  'an Upgrade to a route without a WebSocket handler gets its HTTP answer and then the socket is closed',
  async (t) => {
    const { app } = await listening(t);
    const port = (app.server.address() as { port: number }).port;
    // Routes outside the WebSocket plugin's own scope: the ops surface, the platform and the registry.
    for (const path of ['/healthz', '/api/v1/providers', '/validate']) {
      const socket = tcpConnect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      const timer = setTimeout(() => socket.destroy(new Error('still open')), 5000);
      await closed;
      clearTimeout(timer);
      t.match(text, /^HTTP\/1\.1 (200|401) /, `${path}: the route's own answer, not a 101`);
      t.notOk(socket.errored, `${path}: closed by the server, not by the 5 s guard`);
    }
    // The WebSocket routes themselves still upgrade.
    const { ws } = feed(t, `ws://127.0.0.1:${port}/ws/health_status`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    t.pass('the live feed still upgrades');
  },
);
