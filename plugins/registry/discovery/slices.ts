/**
 * Work in slices: a long job (the index build at start, a rebuild after a
 * replica's reload, reading the word vectors) yields to the event loop every
 * few milliseconds, so /healthz and other requests are answered while it runs.
 * The same shape as the memory index's build (providers/keyv), which plugins
 * may not import.
 */
export const SLICE_MS = 4;

export const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * A clock for one job: `await tick()` yields when the current slice is used up,
 * else returns at once. The clock is read on every call: callers call it once
 * per unit of work that is already ~0.1 ms or more (a catalog record, 1,000
 * word-vector rows).
 */
export function slicer(sliceMs = SLICE_MS): {
  tick: () => Promise<void> | undefined;
  longest: () => number;
  longestCpu: () => number;
} {
  let start = performance.now();
  let cpu = process.cpuUsage();
  let longest = 0;
  let longestCpu = 0;
  return {
    tick: () => {
      const ran = performance.now() - start;
      if (ran < sliceMs) return undefined;
      if (ran > longest) longest = ran;
      // On a loaded machine a slice's wall clock includes time the OS gave to other processes; its CPU time is
      // what the slice itself held the loop for. One read per slice, not per unit of work.
      const used = process.cpuUsage(cpu);
      longestCpu = Math.max(longestCpu, (used.user + used.system) / 1000);
      return yieldToLoop().then(() => {
        start = performance.now();
        cpu = process.cpuUsage();
      });
    },
    /** The longest stretch the job held the loop (ms of wall clock), for the bench. */
    longest: () => longest,
    /** The same in CPU time (process-wide: a GC helper thread's work counts too). */
    longestCpu: () => longestCpu,
  };
}
