/**
 * A trace's spans and generations laid out on one time axis, as fractions of the trace's duration, for the
 * timeline bars. Items without times (agent traces carry tool spans without them) are listed in order with no bar.
 */

export interface TimedItem {
  name: string;
  start_time?: string | null;
  end_time?: string | null;
}

export interface Bar<T> {
  item: T;
  /** 0..1 from the trace's first start; undefined when the item has no usable start time. */
  offset?: number;
  /** 0..1 of the whole trace; at least a sliver so an instant is still visible. */
  width?: number;
  durationMs?: number;
}

const ms = (s: string | null | undefined) => {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
};

export const MIN_WIDTH = 0.005;

export function layoutTimeline<T extends TimedItem>(items: T[]): { bars: Bar<T>[]; totalMs: number } {
  const times = items.flatMap((i) => [ms(i.start_time), ms(i.end_time)]).filter((t): t is number => t !== undefined);
  if (times.length === 0) return { bars: items.map((item) => ({ item })), totalMs: 0 };
  const t0 = Math.min(...times);
  const total = Math.max(...times) - t0;
  const bars = items.map((item): Bar<T> => {
    const s = ms(item.start_time);
    if (s === undefined) return { item };
    const e = ms(item.end_time) ?? s;
    const durationMs = Math.max(0, e - s);
    if (total === 0) return { item, offset: 0, width: 1, durationMs };
    return { item, offset: (s - t0) / total, width: Math.max(MIN_WIDTH, durationMs / total), durationMs };
  });
  // Earliest first; untimed items keep their order after the timed ones.
  bars.sort((a, b) => (a.offset ?? Number.POSITIVE_INFINITY) - (b.offset ?? Number.POSITIVE_INFINITY));
  return { bars, totalMs: total };
}

export function formatMs(v: number | undefined): string {
  if (v === undefined) return '—';
  if (v < 1000) return `${Math.round(v)} ms`;
  return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
}

/** Token counts of a generation's usage under the names providers use. */
export function tokensOf(usage: Record<string, unknown> | undefined): {
  input?: number;
  output?: number;
  total?: number;
} {
  const n = (...keys: string[]) => {
    for (const k of keys) if (typeof usage?.[k] === 'number') return usage[k] as number;
    return undefined;
  };
  const input = n('prompt_tokens', 'input_tokens', 'input');
  const output = n('completion_tokens', 'output_tokens', 'output');
  const total =
    n('total_tokens', 'total') ??
    (input !== undefined || output !== undefined ? (input ?? 0) + (output ?? 0) : undefined);
  return { input, output, total };
}
