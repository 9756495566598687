import type { FastifyInstance } from 'fastify';
import { openStore, type Store } from '../../core/store.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import { HEADER_AUTH, type ScriptEntry } from '../agents/helpers.ts';

/** Backends the team scenarios run on: the embedded SQLite file and the shared Redis (keys unique per test run). */
export type Backend = 'sqlite' | 'redis';

export async function openBackend(
  t: { teardown: (fn: () => unknown) => void },
  backend: Backend,
  dataDir = tempDir('sb-teams-'),
): Promise<Store> {
  const store =
    backend === 'sqlite'
      ? await openStore({ backend: 'sqlite', dataDir })
      : await openStore({ backend: 'redis', url: 'redis://127.0.0.1:6379' });
  t.teardown(() => store.close());
  return store;
}

/** A unique suffix: the Redis is shared, so team and agent names never collide between runs. */
export const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export const FAST_RUNS = {
  heartbeat_ms: 50,
  stale_after_ms: 600,
  poll_ms: 10,
  flush_ms: 5,
  resume_wait_ms: 300,
  token_interval_ms: 0,
};

export async function teamApp(
  t: { teardown: (fn: () => unknown) => void },
  opts: {
    store: Store;
    script: ScriptEntry[];
    delay_ms?: number;
    chunk_delay_ms?: number;
    teams?: Record<string, unknown>;
    memory?: boolean;
    headerAuth?: boolean;
  },
): Promise<FastifyInstance> {
  const config = {
    ...(opts.headerAuth ? { provider_packages: [HEADER_AUTH] } : {}),
    providers: {
      ...(opts.headerAuth
        ? { auth: { default: 'test_header', instances: { test_header: { type: 'test_header' } } } }
        : {}),
      llm: {
        default: 'scripted',
        instances: {
          scripted: {
            type: 'scripted',
            options: { responses: opts.script, delay_ms: opts.delay_ms ?? 0, chunk_delay_ms: opts.chunk_delay_ms ?? 0 },
          },
        },
      },
      ...(opts.memory ? { memory: { default: 'keyv', instances: { keyv: { type: 'keyv' } } } } : {}),
    },
    platform: { teams: { ...FAST_RUNS, ...opts.teams } },
  };
  return makeApp(t, config, { store: opts.store });
}

export interface PlanTask {
  id: string;
  title: string;
  assigned_to: string;
  depends_on: string[];
  description?: string;
}

/**
 * A script for one team: the planner answers `plan` as a JSON list (the
 * script's format), each task's worker answers `RESULT <id>` (or its own
 * entry from `tasks`), the synthesizer echoes the task results it was given.
 */
export function teamScript(plan: PlanTask[], extra: ScriptEntry[] = []): ScriptEntry[] {
  return [
    ...extra,
    {
      match: 'You are planning work for a team',
      content: `Plan: ${JSON.stringify(plan.map((p) => ({ description: '', ...p })))}`,
    },
    ...plan.map((p) => ({
      match: `^You are working on one task of a team run\\.\\nTask ${p.id}:`,
      content: `RESULT ${p.id}`,
    })),
    { match: 'Compose the final answer', content: 'FINAL {{user}}' },
    { content: 'unexpected prompt' },
  ];
}

/** Agents `<prefix>planner`, `<prefix>writer` and the named workers, and a team over them. */
export async function createTeam(
  app: FastifyInstance,
  name: string,
  workers: string[],
  extra: Record<string, unknown> = {},
  agentExtra: Record<string, unknown> = {},
): Promise<void> {
  for (const a of [`${name}-planner`, `${name}-writer`, ...workers]) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: a, model: 'scripted', hooks: { auto_memory: false }, ...agentExtra },
    });
    if (res.statusCode !== 201 && res.statusCode !== 409) throw new Error(`agent ${a}: ${res.statusCode} ${res.body}`);
  }
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/teams',
    payload: { name, planner: `${name}-planner`, synthesizer: `${name}-writer`, workers, ...extra },
  });
  if (res.statusCode !== 201) throw new Error(`team ${name}: ${res.statusCode} ${res.body}`);
}
