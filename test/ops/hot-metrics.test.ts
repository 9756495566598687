import t from 'tap';
import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../plugins/ops/hot-metrics.ts';

/**
 * The hand-rolled request/provider-call metrics (plugins/ops/hot-metrics.ts)
 * must expose exactly what prom-client's Counter and Histogram would for the
 * same updates: same HELP/TYPE lines and the same samples.
 */

/** `metric{a="x",b="y"} v` lines -> { 'metric{a="x",b="y"}' (labels sorted): v }, plus the HELP/TYPE lines. */
function samples(text: string): { meta: string[]; values: Record<string, number> } {
  const meta: string[] = [];
  const values: Record<string, number> = {};
  for (const line of text.split('\n').filter(Boolean)) {
    if (line.startsWith('#')) {
      meta.push(line);
      continue;
    }
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsed line ${line}`);
    const labels = (m[2] ?? '').split(',').filter(Boolean).sort().join(',');
    values[`${m[1]}{${labels}}`] = Number(m[3]);
  }
  return { meta: meta.sort(), values };
}

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED: Array<[Record<string, string>, number]> = [
  [{ method: 'GET', route: '/a', status: '200' }, 0.0005],
  [{ method: 'GET', route: '/a', status: '200' }, 0.001],
  [{ method: 'GET', route: '/a', status: '200' }, 0.05],
  [{ method: 'GET', route: '/a', status: '200' }, 7],
  [{ method: 'POST', route: '/b', status: '422' }, 0.002],
];

t.test('same exposition as prom-client for the same observations', async (t) => {
  const reference = new Registry();
  const refCount = new Counter({
    name: 'x_requests_total',
    help: 'Requests',
    labelNames: ['method', 'route', 'status'],
    registers: [reference],
  });
  const refTime = new Histogram({
    name: 'x_duration_seconds',
    help: 'Latency',
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [reference],
  });

  const hot = new Registry();
  const count = new HotCounter('x_requests_total', 'Requests', hot);
  const time = new HotHistogram('x_duration_seconds', 'Latency', BUCKETS, hot);
  const children = new Map<string, { c: ReturnType<typeof count.child>; h: ReturnType<typeof time.child> }>();

  for (const [labels, v] of OBSERVED) {
    refCount.inc(labels);
    refTime.observe(labels, v);
    const key = JSON.stringify(labels);
    let ch = children.get(key);
    if (!ch) children.set(key, (ch = { c: count.child(labels), h: time.child(labels) }));
    ch.c.inc();
    ch.h.observe(v);
  }

  const want = samples(await reference.metrics());
  const got = samples(await hot.metrics());
  t.same(got.meta, want.meta, 'HELP and TYPE lines');
  t.same(got.values, want.values, 'every sample, buckets cumulative, +Inf, _sum and _count');
  t.equal(
    got.values['x_duration_seconds_bucket{le="0.001",method="GET",route="/a",status="200"}'],
    2,
    'a value on a bound counts in that bucket',
  );
  t.equal(
    got.values['x_duration_seconds_bucket{le="+Inf",method="GET",route="/a",status="200"}'],
    4,
    'a value above every bound counts only in +Inf',
  );

  count.reset();
  time.reset();
  const after = samples(await hot.metrics());
  t.equal(after.values['x_requests_total{method="GET",route="/a",status="200"}'], 0, 'reset zeroes the counters');
  t.equal(after.values['x_duration_seconds_count{method="POST",route="/b",status="422"}'], 0, 'and the histograms');
});
