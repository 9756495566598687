import { loadavg } from 'node:os';
import { discoveryConfig } from '../plugins/registry/discovery/config.ts';
import { Discovery } from '../plugins/registry/discovery/lifecycle.ts';
import { benchCatalog, generate } from './discovery.bench.ts';

/**
 * The bench's index build alone, in process, for a profiler: `node --import tsx --cpu-prof bench/discovery-profile.ts`.
 * Prints the build's CPU time (process.cpuUsage) and the load average; the catalog is the bench's (generate()).
 */
const { servers, agents, skills } = generate();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const engine = await new Discovery(benchCatalog(servers, agents, skills), discoveryConfig(undefined)).ready();
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    docs: engine.size,
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    wall_ms: Math.round(performance.now() - t0),
    load: loadavg()[0]!.toFixed(1),
  }),
);

// DISCOVERY_DUMP=<file>: every development-set query's hits with their scores, to diff two versions' rankings.
if (process.env.DISCOVERY_DUMP) {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const { ENTITY_KINDS } = await import('../plugins/registry/discovery/documents.ts');
  const queries = JSON.parse(
    readFileSync(new URL('../test/fixtures/discovery/queries.json', import.meta.url), 'utf8'),
  ).queries.map((q: { query: string }) => q.query) as string[];
  const kinds = new Set(ENTITY_KINDS);
  const lines = queries.map(
    (q) =>
      `${q}\t${engine
        .search(q, { kinds, allow: () => true, perKind: 10 })
        .map((h) => `${h.doc.id}:${h.relevance_score}`)
        .join(' ')}`,
  );
  writeFileSync(process.env.DISCOVERY_DUMP, `${lines.join('\n')}\n`);
}
