import type { WebSocket } from 'ws';

/** One entry of the health broadcast, keyed by service path (spec 2.7 / 6). */
export interface HealthEntry {
  status: string;
  last_checked_iso: string | null;
  num_tools: number;
}

/** Close codes the hub uses, so clients can tell a load limit from a shutdown or a failure. */
export const HUB_CLOSE = {
  /** 1013 "try again later": the cap is a load limit, not an error of the client. */
  full: { code: 1013, reason: 'too many health connections; retry later' },
  shutdown: { code: 1001, reason: 'server shutting down' },
  /** 1011: the status could not be read, so the feed cannot start. */
  failed: { code: 1011, reason: 'health status unavailable' },
  /** 1008: the client stopped reading; its unsent messages would grow without bound. */
  slow: { code: 1008, reason: 'client too slow to read health updates' },
} as const;

// Well above one full status of a large catalog; a client this far behind is not reading.
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/**
 * Fan-out of health changes to WebSocket clients: the full status on connect,
 * then one message per change. Capped, with ping/pong keep-alive so dead peers
 * are dropped rather than written to forever.
 */
export class HealthHub {
  private readonly sockets = new Set<WebSocket>();
  private readonly alive = new WeakMap<WebSocket, boolean>();
  /**
   * Changes that arrive while a socket's full status is being read; sent after
   * it, so a client never sees an older full status overwrite a newer change.
   */
  private readonly pending = new Map<WebSocket, Array<Record<string, HealthEntry>>>();
  private totalSent = 0;
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxConnections: number,
    private readonly snapshot: () => Promise<Record<string, HealthEntry>>,
    pingIntervalMs: number,
  ) {
    this.timer = setInterval(() => this.sweep(), pingIntervalMs);
    this.timer.unref();
  }

  async add(socket: WebSocket): Promise<void> {
    // Counted from here on (before the snapshot is read), so concurrent connects cannot overshoot the cap.
    if (this.sockets.size >= this.maxConnections) {
      socket.close(HUB_CLOSE.full.code, HUB_CLOSE.full.reason);
      return;
    }
    this.sockets.add(socket);
    this.alive.set(socket, true);
    this.pending.set(socket, []);
    socket.on('pong', () => this.alive.set(socket, true));
    socket.on('message', (data) => {
      // Browsers cannot send protocol pings; an application-level "ping" gets "pong".
      if (data.toString() === 'ping') this.sendRaw(socket, 'pong');
    });
    const forget = () => {
      this.sockets.delete(socket);
      this.pending.delete(socket);
    };
    socket.on('close', forget);
    socket.on('error', forget);
    let full: Record<string, HealthEntry>;
    try {
      full = await this.snapshot();
    } catch {
      forget();
      socket.close(HUB_CLOSE.failed.code, HUB_CLOSE.failed.reason);
      return;
    }
    const queued = this.pending.get(socket);
    this.pending.delete(socket);
    this.send(socket, full);
    for (const change of queued ?? []) this.send(socket, change);
  }

  broadcast(changes: Record<string, HealthEntry>): void {
    if (Object.keys(changes).length === 0) return;
    for (const s of this.sockets) {
      const queue = this.pending.get(s);
      if (queue) queue.push(changes);
      else this.send(s, changes);
    }
  }

  stats() {
    return {
      active_connections: this.sockets.size,
      total_messages_sent: this.totalSent,
      uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000),
    };
  }

  close(): void {
    clearInterval(this.timer);
    for (const s of this.sockets) s.close(HUB_CLOSE.shutdown.code, HUB_CLOSE.shutdown.reason);
    this.sockets.clear();
    this.pending.clear();
  }

  private send(socket: WebSocket, payload: Record<string, HealthEntry>): void {
    this.sendRaw(socket, JSON.stringify(payload));
  }

  private sendRaw(socket: WebSocket, text: string): void {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.sockets.delete(socket);
      socket.close(HUB_CLOSE.slow.code, HUB_CLOSE.slow.reason);
      // A peer that does not read will not read the close frame either.
      setTimeout(() => socket.terminate(), 1000).unref();
      return;
    }
    socket.send(text);
    this.totalSent++;
  }

  private sweep(): void {
    for (const s of this.sockets) {
      if (!this.alive.get(s)) {
        // No pong since the last ping: the peer is gone or not reading.
        s.terminate();
        this.sockets.delete(s);
        this.pending.delete(s);
        continue;
      }
      this.alive.set(s, false);
      s.ping();
    }
  }
}
