import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import type { MemoryProvider } from '../core/primitives/memory.ts';
import { openStore } from '../core/store.ts';
import { keyvMemory } from '../providers/keyv/memory-provider.ts';
import type { SnapshotManifest } from '../providers/keyv/snapshot-store.ts';
import { load, percentiles, type BenchModule, type BenchRow, type LoadResult } from './harness.ts';
import { corpus } from './memory-corpus.ts';
import { ROOT, startScript, startSwitchboard } from './processes.ts';

/** Records in the big namespace; BENCH_MEMORY_RECORDS scales it down for quick runs. */
const BIG = Number(process.env.BENCH_MEMORY_RECORDS ?? 100_000);
const SEARCHES = 200;

/** The record a retrieve answers, served by a bare Fastify route in its own process: the baseline. */
const BARE = `
import Fastify from 'fastify';
const record = JSON.parse(process.env.BENCH_RECORD);
const app = Fastify({ logger: false });
app.get('/api/v1/memory/:namespace/:key', async () => record);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
`;

/** The durable provider's big namespace, written through the provider itself into the SQLite file the child opens. */
async function seedKeyv(dataDir: string, text: (i: number) => string): Promise<void> {
  const store = await openStore({ backend: 'sqlite', dataDir });
  const m = (await keyvMemory.create(
    'keyv',
    {},
    { store, logger: pino({ level: 'silent' }), dataDir, lookup: () => undefined },
  )) as MemoryProvider;
  for (let i = 0; i < BIG; i++) await m.store('big', { key: `r${i}`, content: text(i), metadata: { shard: i % 10 } });
  await m.close();
  await store.close();
}

/** The in-process provider lives in the child, so it is filled through the API (autocannon, a fixed number of requests). */
async function seedHttp(
  base: string,
  provider: string,
  ns: string,
  n: number,
  text: (i: number) => string,
): Promise<void> {
  let next = 0;
  const r = await autocannon({
    url: `${base}/api/v1/memory/${ns}`,
    connections: 32,
    amount: n,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-provider-memory': provider },
        setupRequest: (req) => {
          const i = next++;
          return { ...req, body: JSON.stringify({ key: `r${i}`, content: text(i), metadata: { shard: i % 10 } }) };
        },
      },
    ],
  });
  if (r.errors || r.non2xx) throw new Error(`seeding ${provider}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
}

/** The namespace's record count as a list reports it (checked after the build is measured: a list builds the index too). */
async function total(base: string, provider: string, ns: string): Promise<number> {
  const res = await fetch(`${base}/api/v1/memory/${ns}?limit=1`, { headers: { 'x-provider-memory': provider } });
  return ((await res.json()) as { total: number }).total;
}

async function searchOnce(base: string, provider: string, ns: string, query: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/memory/${ns}/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-provider-memory': provider },
    body: JSON.stringify({ query, top_k: 10 }),
  });
  const body = (await res.json()) as { results?: unknown[] };
  if (res.status !== 200 || !Array.isArray(body.results))
    throw new Error(`search on ${provider} answered ${res.status}`);
  return performance.now() - t0;
}

/**
 * /healthz under load (10 connections) for exactly as long as the first search of a
 * cold namespace takes (the search builds the index): what other requests see
 * while an index is being built.
 */
async function healthDuringBuild(
  base: string,
  provider: string,
  ns: string,
): Promise<{ p50: number; p99: number; buildMs: number; requests: number; errors: number; idleP99: number }> {
  const samples: number[] = [];
  const run = autocannon({ url: `${base}/healthz`, connections: 10, duration: 600 });
  (run as unknown as import('node:events').EventEmitter).on(
    'response',
    (_c: unknown, _s: number, _b: number, ms: number) => {
      samples.push(ms);
    },
  );
  // Connections open, then 2 s of the same load with no build: the baseline this row is compared with.
  await new Promise((r) => setTimeout(r, 500));
  const idleFrom = samples.length;
  await new Promise((r) => setTimeout(r, 2000));
  const idle = percentiles(samples.slice(idleFrom));
  const from = samples.length;
  const buildMs = await searchOnce(base, provider, ns, 'agent');
  const during = samples.slice(from);
  (run as unknown as { stop: () => void }).stop();
  const r = await run;
  return { ...percentiles(during), buildMs, requests: during.length, errors: r.errors + r.non2xx, idleP99: idle.p99 };
}

/** Waits until the keyv instance's snapshot of `ns` reflects the namespace's current version (written after a build). */
async function snapshotWritten(dataDir: string, ns: string): Promise<SnapshotManifest> {
  const store = await openStore({ backend: 'sqlite', dataDir });
  try {
    for (let i = 0; i < 1200; i++) {
      const m = await store.collection<SnapshotManifest>('memory:keyv:index-snapshot').get(ns);
      const v = String((await store.collection<number>('memory:keyv:ns-counter').get(ns)) ?? 0);
      if (m && m.version === v) return m;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no current index snapshot of '${ns}' after 120 s`);
  } finally {
    await store.close();
  }
}

/** User + system CPU time of a process so far, from /proc (10 ms resolution): what a request cost while the machine is shared. */
function cpuMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

interface Footprint {
  records: number;
  rawBytes: number;
  indexBytes: number;
  loadedIndexBytes: number;
  buildMs: number;
  snapshotBytes: number;
  encodeMs: number;
  decodeMs: number;
  decodeCpuMs: number;
  selectiveCpuMs: number;
  broadCpuMs: number;
}

/** bench/memory-footprint.ts in its own process (it needs --expose-gc and a heap with nothing else in it). */
function footprint(): Footprint {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'bench/memory-footprint.ts', String(BIG)],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return JSON.parse(out.trim().split('\n').pop() as string) as Footprint;
}

/** Sequential searches (one at a time: the p50 is the service time), varied queries, on a built index. */
async function searchLatency(
  base: string,
  provider: string,
  ns: string,
  query: (i: number) => string,
): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < SEARCHES; i++) samples.push(await searchOnce(base, provider, ns, query(i)));
  return percentiles(samples);
}

const bench: BenchModule = async () => {
  const { content, query, broad } = corpus();
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-memory-'));
  const t0 = performance.now();
  await seedKeyv(dataDir, content);
  const seedKeyvS = (performance.now() - t0) / 1000;

  const record = { key: 'k1', content: content(1), metadata: { shard: 1 } };
  // Platform surface, noop auth, no config file: the provider's SQLite file seeded above is the child's store.
  let sb = await startSwitchboard({}, {}, { args: ['--surfaces', 'platform'], dataDir });
  const served = {
    namespace: 'hot',
    ...record,
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
  };
  const bare = await startScript(BARE, '/api/v1/memory/x/y', { BENCH_RECORD: JSON.stringify(served) });
  const rows: BenchRow[] = [];
  const group = 'memory';
  const errs = (r: LoadResult) => (r.errors || r.non2xx ? `${r.errors} errors, ${r.non2xx} non-2xx` : undefined);
  try {
    const t1 = performance.now();
    await seedHttp(sb.base, 'in_memory', 'big', BIG, content);
    const seedHttpS = (performance.now() - t1) / 1000;
    for (const p of ['in_memory', 'keyv']) {
      const res = await fetch(`${sb.base}/api/v1/memory/hot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-provider-memory': p },
        body: JSON.stringify(record),
      });
      if (res.status !== 201) throw new Error(`store on ${p} answered ${res.status}: ${await res.text()}`);
    }

    await load({ url: `${bare.base}/api/v1/memory/hot/k1`, duration: 1 });
    const baseline = await load({ url: `${bare.base}/api/v1/memory/hot/k1` });
    rows.push({
      group,
      name: 'bare Fastify, same record JSON (baseline)',
      rps: baseline.rps,
      p50_ms: baseline.p50_ms,
      p99_ms: baseline.p99_ms,
      ratio: 1,
      note: errs(baseline),
    });
    const health = await load({ url: `${sb.base}/healthz` });
    rows.push({
      group,
      name: 'GET /healthz',
      rps: health.rps,
      p50_ms: health.p50_ms,
      p99_ms: health.p99_ms,
      ratio: health.rps / baseline.rps,
      note: errs(health),
    });

    for (const p of ['in_memory', 'keyv']) {
      const h = { 'x-provider-memory': p };
      const json = { ...h, 'content-type': 'application/json' };
      await load({ url: `${sb.base}/api/v1/memory/hot/k1`, headers: h, duration: 1 });
      const retrieve = await load({ url: `${sb.base}/api/v1/memory/hot/k1`, headers: h });
      const store = await load({
        url: `${sb.base}/api/v1/memory/hot`,
        method: 'POST',
        headers: json,
        body: JSON.stringify(record),
      });
      const search = await load({
        url: `${sb.base}/api/v1/memory/hot/search`,
        method: 'POST',
        headers: json,
        body: JSON.stringify({ query: content(1).split(' ').slice(0, 3).join(' '), top_k: 5 }),
      });
      const row = (name: string, r: LoadResult): BenchRow => ({
        group,
        name: `${name} (${p})`,
        rps: r.rps,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        ratio: r.rps / baseline.rps,
        note: errs(r),
      });
      rows.push(
        row('GET /memory/{ns}/{key}', retrieve),
        row('POST /memory/{ns} (replace one key)', store),
        row('POST /memory/{ns}/search, 1 record', search),
      );
    }

    const scale = 'memory: search at scale';
    const n = BIG.toLocaleString('en');
    // The floor for the sequential rows: the same one-at-a-time fetch loop against the bare server.
    const seq: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const t = performance.now();
      await (await fetch(`${bare.base}/api/v1/memory/hot/k1`)).json();
      seq.push(performance.now() - t);
    }
    const floor = percentiles(seq);
    rows.push({
      group: scale,
      name: 'bare Fastify GET, sequential fetches (baseline of the sequential rows)',
      p50_ms: floor.p50,
      p99_ms: floor.p99,
      ratio: 1,
      note: 'the HTTP round trip on this machine at this moment; a sequential row minus this p50 is what the search adds',
    });
    const builds: Record<string, number> = {};
    for (const p of ['in_memory', 'keyv']) {
      // No search or list has touched 'big' yet: this first search builds its index (keyv: from the
      // records, as no snapshot exists yet), with /healthz under load meanwhile.
      const hb = await healthDuringBuild(sb.base, p, 'big');
      builds[p] = hb.buildMs;
      rows.push({
        group: scale,
        name: `GET /healthz while the first search builds the index of ${n} records (${p})`,
        rps: hb.requests / (hb.buildMs / 1000),
        p50_ms: hb.p50,
        p99_ms: hb.p99,
        ratio: hb.p99 / hb.idleP99,
        goal: 'p99 < 50 ms',
        note: `${hb.p99 < 50 ? 'met' : 'NOT met'}; ratio is p99 against the same load in the 2 s just before, with no build (p99 ${hb.idleP99.toFixed(1)} ms); build took ${hb.buildMs.toFixed(0)} ms in slices that yield to the event loop; ${hb.requests} requests answered meanwhile${hb.errors ? `, ${hb.errors} errors` : ''}`,
      });
      const stored = await total(sb.base, p, 'big');
      if (stored !== BIG) throw new Error(`${p}: ${stored} records in 'big', expected ${BIG}`);

      const s = await searchLatency(sb.base, p, 'big', query);
      rows.push({
        group: scale,
        name: `POST /memory/{ns}/search over ${n} records, selective query, top_k 10 (${p}, sequential)`,
        p50_ms: s.p50,
        p99_ms: s.p99,
        ratio: s.p50 / floor.p50,
        goal: 'p50 < 2 ms',
        note: `${s.p50 < 2 ? 'met' : 'NOT met'}; seeded ${p === 'keyv' ? `through the provider in ${seedKeyvS.toFixed(0)} s` : `through HTTP in ${seedHttpS.toFixed(0)} s`}`,
      });
      const b = await searchLatency(sb.base, p, 'big', broad);
      const met = b.p50 < 20 && b.p99 < 60;
      rows.push({
        group: scale,
        name: `POST /memory/{ns}/search over ${n} records, broad query (terms in every record), top_k 10 (${p}, sequential)`,
        p50_ms: b.p50,
        p99_ms: b.p99,
        ratio: b.p50 / floor.p50,
        goal: 'p50 < 20 ms, p99 < 60 ms',
        note: `${met ? 'met' : 'NOT met'}; top-k by MaxScore with a bounded heap (providers/keyv/bm25-index.ts)`,
      });
    }

    // Cold start: the keyv build above wrote the namespace's snapshot; a restarted process loads it.
    const manifest = await snapshotWritten(dataDir, 'big');
    await sb.stop();
    sb = await startSwitchboard({}, {}, { args: ['--surfaces', 'platform'], dataDir });
    // A search of the small namespace first, so the cold search below pays for loading the index, not for
    // the fresh process compiling the route and the search code.
    for (let i = 0; i < 20; i++) await searchOnce(sb.base, 'keyv', 'hot', 'agent');
    const cpu0 = cpuMs(sb.child.pid);
    const coldMs = await searchOnce(sb.base, 'keyv', 'big', 'agent');
    const coldCpu = cpuMs(sb.child.pid) - cpu0;
    const warm: number[] = [];
    for (let i = 0; i < 20; i++) warm.push(await searchOnce(sb.base, 'keyv', 'big', 'agent'));
    const warmMs = percentiles(warm).p50;
    rows.push({
      group: scale,
      name: `first search after a restart, persisted index of ${n} records loaded (keyv)`,
      p50_ms: coldMs,
      ratio: coldMs / builds.keyv,
      goal: 'load < 300 ms',
      note: `${coldMs - warmMs < 300 ? 'met' : 'NOT met'}: ${(coldMs - warmMs).toFixed(0)} ms more than the same search warm (p50 of 20: ${warmMs.toFixed(1)} ms); the server spent ${coldCpu.toFixed(0)} ms of CPU on the cold search; ratio against the build from records above (${builds.keyv.toFixed(0)} ms); snapshot stored as ${(manifest.bytes / 2 ** 20).toFixed(1)} MiB in ${manifest.chunks} chunks${manifest.raw_bytes ? ` (${(manifest.raw_bytes / 2 ** 20).toFixed(1)} MiB encoded, deflated for storage)` : ''}. in_memory persists nothing (a restart starts empty)`,
    });

    const f = footprint();
    rows.push(
      {
        group: scale,
        name: `index search in process (no HTTP) over ${n} records, selective query, top_k 10: CPU per query`,
        p50_ms: f.selectiveCpuMs,
        goal: 'p50 < 2 ms',
        note: `${f.selectiveCpuMs < 2 ? 'met' : 'NOT met'}: mean CPU time of 200 queries after 50 to warm up (bench/memory-footprint.ts), unaffected by waiting for a core`,
      },
      {
        group: scale,
        name: `index search in process (no HTTP) over ${n} records, broad query, top_k 10: CPU per query`,
        p50_ms: f.broadCpuMs,
        goal: 'p50 < 20 ms',
        note: `${f.broadCpuMs < 20 ? 'met' : 'NOT met'}: as above; every record ties on the two broad words (same length), so MaxScore cannot skip any and each is compared by key`,
      },
    );
    const raw = f.rawBytes;
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    rows.push(
      {
        group: scale,
        name: `index memory at ${n} records, built beside the records it indexes (in_memory)`,
        ratio: f.indexBytes / raw,
        goal: '< 1.2x raw content',
        note: `${f.indexBytes / raw < 1.2 ? 'met' : 'NOT met'}: ${mib(f.indexBytes)} for ${mib(raw)} of content (heapUsed + arrayBuffers after GC, records held on both sides; keys shared with the records); built in ${f.buildMs.toFixed(0)} ms`,
      },
      {
        group: scale,
        name: `index memory at ${n} records, loaded from its snapshot (keyv: no records in memory)`,
        ratio: f.loadedIndexBytes / raw,
        goal: '< 1.2x raw content',
        note: `${f.loadedIndexBytes / raw < 1.2 ? 'met' : 'NOT met'}: ${mib(f.loadedIndexBytes)} for ${mib(raw)} of content (keys held by the index); snapshot ${mib(f.snapshotBytes)} encoded (before the store's deflate), encoded in ${f.encodeMs.toFixed(0)} ms, decoded in ${f.decodeMs.toFixed(0)} ms (${f.decodeCpuMs.toFixed(0)} ms CPU)`,
      },
    );
  } finally {
    await sb.stop();
    await bare.stop();
  }
  return rows;
};

export default bench;
