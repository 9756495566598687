import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the per-request and per-provider-call metrics,
 * registered in a prom-client registry (which still formats /metrics).
 *
 * Why not prom-client's own: its label children re-validate and re-hash the
 * label set on every inc()/observe(), which was ~6 % of the CPU of a routed
 * memory retrieve. Here a child is a plain object made once per label set
 * (callers cache it), and an update is a few additions.
 */

type Labels = Record<string, string>;

interface CounterChild {
  labels: Labels;
  value: number;
}

/**
 * What prom-client's registry reads from a metric (name, help, type,
 * aggregator, get(), reset()); each label set is a child kept in `children`.
 */
abstract class HotMetric<Child> {
  abstract readonly type: string;
  readonly aggregator = 'sum';
  protected readonly children: Child[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }
}

export class HotCounter extends HotMetric<CounterChild> {
  readonly type = 'counter';

  /** A handle for one label set; keep it, and call inc() on it. */
  child(labels: Labels): { inc(by?: number): void } {
    const c: CounterChild = { labels: { ...labels }, value: 0 };
    this.children.push(c);
    return {
      inc(by = 1) {
        c.value += by;
      },
    };
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.children.map((c) => ({ labels: c.labels, value: c.value })),
    };
  }

  reset(): void {
    for (const c of this.children) c.value = 0;
  }
}

interface HistogramChild {
  labels: Labels;
  /** Per-bucket (not cumulative) counts, one per upper bound. */
  counts: number[];
  sum: number;
  count: number;
}

export class HotHistogram extends HotMetric<HistogramChild> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    super(name, help, registry);
  }

  child(labels: Labels): { observe(value: number): void } {
    const h: HistogramChild = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
    this.children.push(h);
    const bounds = this.buckets;
    return {
      observe(value: number) {
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]) {
            h.counts[i]++;
            break;
          }
        }
        h.sum += value;
        h.count++;
      },
    };
  }

  async get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const h of this.children) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += h.counts[i];
        values.push({ labels: { ...h.labels, le }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...h.labels, le: '+Inf' }, value: h.count, metricName: `${this.name}_bucket` });
      values.push({ labels: h.labels, value: h.sum, metricName: `${this.name}_sum` });
      values.push({ labels: h.labels, value: h.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const h of this.children) {
      h.counts.fill(0);
      h.sum = 0;
      h.count = 0;
    }
  }
}
