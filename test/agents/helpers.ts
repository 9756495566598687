import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { discoverPackages } from '../../core/discovery.ts';
import type { Store } from '../../core/store.ts';
import { makeApp, tempDir } from '../helpers/app.ts';
import type { Step } from './fixtures/step-llm/index.ts';

export type { Step };

export const STEP_LLM = fileURLToPath(new URL('./fixtures/step-llm', import.meta.url));
/** Test-only auth: the caller is named by X-Test-User (also used by the memory HTTP tests). */
export const HEADER_AUTH = fileURLToPath(new URL('./fixtures/header-auth', import.meta.url));

/** Memory provider types the suite runs against; each exists only once its package is discovered. */
export async function memoryTypes(): Promise<string[]> {
  const pkgs = await discoverPackages();
  const types = new Set(pkgs.flatMap((p) => p.factories.filter((f) => f.kind === 'memory').map((f) => f.type)));
  return ['noop', 'in_memory', 'keyv'].filter((t) => types.has(t));
}

/** An entry of the scripted LLM's script (providers/scripted/script.ts). */
export interface ScriptEntry {
  match?: string;
  content?: string;
  tool_calls?: Array<{ name: string; input?: Record<string, unknown>; id?: string }>;
  turns?: Array<{ content?: string; tool_calls?: ScriptEntry['tool_calls'] }>;
}

export interface AgentAppOptions {
  memory?: string;
  /** Use the scripted LLM (providers/scripted) with this script... */
  script?: ScriptEntry[];
  /** ...waiting this long before each answer. */
  delay_ms?: number;
  /** Or the test step LLM, which replays steps in order (with per-chunk delays). */
  steps?: Step[];
  config?: Record<string, unknown>;
  /** The core store backend; sqlite puts the event log in a real SQLite file. */
  store?: 'memory' | 'sqlite' | Store;
}

/** An app whose LLM replays `steps` and whose memory is the given provider type. */
export async function agentApp(
  t: { teardown: (fn: () => unknown) => void },
  opts: AgentAppOptions = {},
): Promise<FastifyInstance> {
  // 'default': no memory configuration at all (noop mode picks the provider).
  const memory =
    opts.memory && opts.memory !== 'none' && opts.memory !== 'default'
      ? { memory: { default: opts.memory, instances: { [opts.memory]: { type: opts.memory } } } }
      : {};
  const scripted = {
    default: 'scripted',
    instances: { scripted: { type: 'scripted', options: { responses: opts.script, delay_ms: opts.delay_ms ?? 0 } } },
  };
  const stepped = {
    default: 'steps',
    instances: { steps: { type: 'test_steps', options: { steps: opts.steps ?? [{ content: 'ok' }] } } },
  };
  const extra = (opts.config ?? {}) as { provider_packages?: string[]; providers?: Record<string, unknown> };
  const config = {
    ...extra,
    provider_packages: [STEP_LLM, ...(extra.provider_packages ?? [])],
    providers: { llm: opts.script ? scripted : stepped, ...memory, ...extra.providers },
    platform: { agents: { heartbeat_ms: 50, stale_after_ms: 1000, poll_ms: 10, flush_ms: 5, resume_wait_ms: 300 } },
  };
  if (opts.store && typeof opts.store === 'object') return makeApp(t, config, { store: opts.store });
  if (opts.store === 'sqlite') {
    const { openStore } = await import('../../core/store.ts');
    const store = await openStore({ backend: 'sqlite', dataDir: tempDir('sb-agents-') });
    t.teardown(() => store.close());
    return makeApp(t, config, { store });
  }
  return makeApp(t, config);
}

/** What the step LLM was asked, in order. */
export function llmRequests(
  app: FastifyInstance,
): Array<{ messages: Array<Record<string, unknown>>; tools?: Array<{ name: string }> }> {
  return (app.sb.providers.get('llm') as unknown as { requests: never[] }).requests;
}

export async function listen(_t: { teardown: (fn: () => unknown) => void }, app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  // fetch keeps sockets alive for a few seconds; drop them so teardown does not wait for the client.
  const close = app.close.bind(app);
  Object.assign(app, { close: () => (app.server.closeAllConnections(), close()) });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export type Ev = { type: string } & Record<string, unknown>;

export function parseSse(body: string): Ev[] {
  return body
    .split('\n\n')
    .map((b) => b.trim())
    .filter((b) => b.startsWith('data: '))
    .map((b) => JSON.parse(b.slice(6)) as Ev);
}

/** Read SSE events from a live response until `stop` says so (then abort) or the stream ends. */
export async function readSse(
  res: Response,
  stop: (ev: Ev, all: Ev[]) => boolean = () => false,
  abort?: AbortController,
): Promise<Ev[]> {
  const out: Ev[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i).trim();
        buf = buf.slice(i + 2);
        if (!block.startsWith('data: ')) continue;
        const ev = JSON.parse(block.slice(6)) as Ev;
        out.push(ev);
        if (stop(ev, out)) {
          abort?.abort();
          await reader.cancel().catch(() => {});
          return out;
        }
      }
    }
  } catch (err) {
    if (!abort?.signal.aborted) throw err;
  }
  return out;
}

export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let v = await fn();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    v = await fn();
  }
  return v;
}
