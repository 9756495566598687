import autocannon from 'autocannon';

/** One row of the table `npm run bench` prints and bench/RESULTS.md records. */
export interface BenchRow {
  /** Rows of one group share a baseline, measured in the same run. */
  group: string;
  name: string;
  rps?: number;
  p50_ms?: number;
  p99_ms?: number;
  /** This row's rps (or, for latency-only rows, its p50) against the group's baseline. */
  ratio?: number;
  goal?: string;
  note?: string;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  /** Seconds; BENCH_DURATION overrides for quick runs. */
  duration?: number;
}

export interface LoadResult {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non2xx: number;
}

/** autocannon against a URL on loopback; bounded in time, stops by itself. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  const duration = Number(process.env.BENCH_DURATION ?? opts.duration ?? 5);
  const run = autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 10,
    duration,
  });
  // autocannon's own percentiles come from a histogram of whole milliseconds, so on
  // loopback nearly every p50 reads 0 and a p99 of 1 ms vs 2 ms is a "2x". Each
  // response's time is reported as a float first: the percentiles are taken from those.
  const samples: number[] = [];
  // The returned promise is also the instance (an EventEmitter); the types only know the promise.
  (run as unknown as import('node:events').EventEmitter).on(
    'response',
    (_client: unknown, _status: number, _bytes: number, ms: number) => {
      samples.push(ms);
    },
  );
  const r = await run;
  const p = samples.length ? percentiles(samples) : { p50: r.latency.p50, p99: r.latency.p99 };
  return { rps: r.requests.average, p50_ms: p.p50, p99_ms: p.p99, errors: r.errors, non2xx: r.non2xx };
}

/** Percentiles of a list of millisecond samples (for sequential, non-HTTP measurements). */
export function percentiles(samples: number[]): { p50: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * The median of per-round ratios. Goals stated as a ratio are judged on this:
 * each round measures both sides seconds apart, so a burst of other work on
 * the shared machine moves one round, not the verdict (a ratio of two
 * independently best rounds can pair a lucky baseline with an unlucky side).
 */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A bench module: `bench/<area>.bench.ts` default-exports one of these. */
export type BenchModule = () => Promise<BenchRow[]>;
