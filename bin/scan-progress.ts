/** Progress of the scan CLI: a redrawn bar on a terminal, one plain line per item otherwise (logs, CI). */
export interface Progress {
  start(total: number): void;
  item(done: number, label: string, outcome: string): void;
  end(): void;
}

const fmtSeconds = (s: number) =>
  !Number.isFinite(s)
    ? '?'
    : s >= 3600
      ? `${Math.floor(s / 3600)}h${Math.round((s % 3600) / 60)}m`
      : s >= 60
        ? `${Math.floor(s / 60)}m${Math.round(s % 60)}s`
        : `${Math.round(s)}s`;

export function progressFor(stream: NodeJS.WriteStream, now: () => number = () => performance.now()): Progress {
  let total = 0;
  let t0 = 0;
  const rateOf = (done: number) => {
    const secs = (now() - t0) / 1000;
    return secs > 0 ? done / secs : 0;
  };
  if (stream.isTTY) {
    const width = 24;
    return {
      start(n) {
        total = n;
        t0 = now();
      },
      item(done, label) {
        const rate = rateOf(done);
        const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
        const filled = total ? Math.round((done / total) * width) : width;
        const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
        const cols = stream.columns || 100;
        const line = `[${bar}] ${done}/${total} ${rate.toFixed(1)}/s ETA ${fmtSeconds(eta)} ${label}`;
        stream.write(`\r\x1b[2K${line.slice(0, cols - 1)}`);
      },
      end() {
        stream.write('\r\x1b[2K');
      },
    };
  }
  return {
    start(n) {
      total = n;
      t0 = now();
      stream.write(`scanning ${n} item${n === 1 ? '' : 's'}\n`);
    },
    item(done, label, outcome) {
      stream.write(`[${done}/${total}] ${label}: ${outcome} (${rateOf(done).toFixed(1)}/s)\n`);
    },
    end() {},
  };
}
