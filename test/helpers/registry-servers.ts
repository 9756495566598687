import type { Server } from 'node:http';
import type { Test as T } from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../core/store.ts';
import { makeApp } from './app.ts';
import { asUser } from './registry-auth.ts';
import { listenLoopback } from '../fixtures/loopback.ts';

/** POST /api/servers/register as `admin`, asserting the 201. */
export async function registerServer(
  t: T,
  app: FastifyInstance,
  admin: Record<string, string>,
  payload: Record<string, unknown>,
  description = 'test server',
): Promise<void> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/servers/register',
    headers: admin,
    payload: { description, ...payload },
  });
  t.equal(res.statusCode, 201, `registered ${String(payload.path)}: ${res.body}`);
}

/** A test's own HTTP server on a loopback port, closed (open connections too) at teardown. */
export async function listenOnLoopback(t: T, server: Server): Promise<string> {
  const base = await listenLoopback(server);
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return base;
}

/**
 * The app listening on a loopback port with periodic health checks off, and an
 * admin (alice) to register servers with.
 */
export async function listeningRegistry(t: T, registry: Record<string, unknown> = {}, store?: Store) {
  const app = await makeApp(
    t,
    { registry: { health: { interval_seconds: 0, timeout_seconds: 2 }, ...registry } },
    { store },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  // Client pools can leave request-less connections that Node's close would wait a minute for
  // (headersTimeout). This runs before the app's own close: teardowns are LIFO.
  t.teardown(() => app.server.closeAllConnections());
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const admin = await asUser(app, ['mcp-registry-admin'], 'alice');
  return { app, base, admin };
}
