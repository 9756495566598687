import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, ROOT, waitHealthy } from './processes.ts';

/** What GET /api/v1/memory/bench/k1 answers, so the baseline serialises the same bytes. */
export const RECORD = {
  namespace: 'bench',
  key: 'k1',
  content: 'The quick brown fox jumps over the lazy dog.',
  metadata: { source: 'bench', n: 1 },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

/** The baseline route of the foundation and /validate goals: bare Fastify, no logger, one route of the retrieve's shape. */
const BARE = `
import Fastify from 'fastify';
const record = JSON.parse(process.env.BENCH_RECORD);
const app = Fastify({ logger: false });
app.get('/api/v1/memory/:namespace/:key', async () => record);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

/** Starts it in its own process (a server under test never shares an event loop with autocannon); `url` is the route. */
export async function startBare(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--input-type=module', '-e', BARE], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), BENCH_RECORD: JSON.stringify(RECORD) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}/api/v1/memory/bench/k1`;
  await waitHealthy(url, child);
  return { url, child };
}
