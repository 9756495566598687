import type { WebSocket } from 'ws';

/** One entry of the health broadcast, keyed by service path (spec 2.7 / 6). */
export interface HealthEntry {
  status: string;
  last_checked_iso: string | null;
  num_tools: number;
}

/**
 * Fan-out of health changes to WebSocket clients: the full status on connect,
 * then one message per change. Capped, with ping/pong keep-alive so dead peers
 * are dropped rather than written to forever.
 */
export class HealthHub {
  private readonly sockets = new Set<WebSocket>();
  private readonly alive = new WeakMap<WebSocket, boolean>();
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
    if (this.sockets.size >= this.maxConnections) {
      // 1013: try again later — the cap is a load limit, not an error of the client.
      socket.close(1013, 'too many health connections');
      return;
    }
    this.sockets.add(socket);
    this.alive.set(socket, true);
    socket.on('pong', () => this.alive.set(socket, true));
    socket.on('message', (data) => {
      // Browsers cannot send protocol pings; an application-level "ping" gets "pong".
      if (data.toString() === 'ping') this.sendRaw(socket, 'pong');
    });
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => this.sockets.delete(socket));
    this.send(socket, await this.snapshot());
  }

  broadcast(changes: Record<string, HealthEntry>): void {
    if (Object.keys(changes).length === 0) return;
    for (const s of this.sockets) this.send(s, changes);
  }

  stats() {
    return { active_connections: this.sockets.size, total_messages_sent: this.totalSent, uptime_seconds: Math.round((Date.now() - this.startedAt) / 1000) };
  }

  close(): void {
    clearInterval(this.timer);
    for (const s of this.sockets) s.close(1001, 'server shutting down');
    this.sockets.clear();
  }

  private send(socket: WebSocket, payload: Record<string, HealthEntry>): void {
    this.sendRaw(socket, JSON.stringify(payload));
  }

  private sendRaw(socket: WebSocket, text: string): void {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(text);
    this.totalSent++;
  }

  private sweep(): void {
    for (const s of this.sockets) {
      if (!this.alive.get(s)) {
        s.terminate();
        this.sockets.delete(s);
        continue;
      }
      this.alive.set(s, false);
      s.ping();
    }
  }
}
