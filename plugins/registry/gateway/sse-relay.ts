import { randomUUID } from 'node:crypto';
import { SwitchboardError, badGateway } from '../../../core/errors.ts';
import type { PubSub } from '../../../core/pubsub.ts';

/**
 * Legacy SSE sessions across replicas. The GET /{server}/sse stream lives on
 * the replica that opened it (the backend answers every message on that
 * stream), so a POST /{server}/messages that the load balancer sends to
 * another replica is relayed to it over Redis pub/sub: the request goes out on
 * one channel all replicas hear, the replica holding the session acknowledges
 * at once, posts to the backend as if the client had reached it, and sends the
 * backend's answer back on the asking replica's own channel.
 *
 * The asking replica has already authenticated the caller and checked every
 * call against its scopes; the holder checks that the caller owns the session.
 * Only the client's body and the MCP headers travel through Redis: never the
 * caller's token nor the backend credential (the holder uses its own).
 * Pub/sub is best effort: no acknowledgement within ackMs reads as "nobody
 * holds this session" (404, as on one replica).
 */

export const SSE_RELAY_CHANNEL = 'switchboard:gateway:sse';

export interface RelayedPost {
  sid: string;
  server: string;
  owner: string | undefined;
  headers: Record<string, string>;
  body: unknown;
}

export interface RelayAnswer {
  status: number;
  text: string;
}

type Wire =
  | ({ kind: 'post'; rid: string; replyTo: string } & RelayedPost)
  | { kind: 'ack'; rid: string }
  | ({ kind: 'result'; rid: string } & RelayAnswer)
  | { kind: 'error'; rid: string; statusCode: number; code: string; detail: string };

interface Waiting {
  /** The holder took the request: from then on the wait is for the backend's answer. */
  acked(): void;
  settle(v: RelayAnswer | undefined | SwitchboardError): void;
}

export class SseRelay {
  private readonly replyChannel = `${SSE_RELAY_CHANNEL}:${randomUUID()}`;
  private readonly waiting = new Map<string, Waiting>();
  private readonly unsubscribe: Array<() => Promise<void>> = [];

  constructor(
    private readonly pubsub: PubSub,
    /** Does this replica hold the session? */
    private readonly holds: (sid: string) => boolean,
    /** Post to the session's backend here; throws a SwitchboardError to refuse. */
    private readonly handle: (post: RelayedPost) => Promise<RelayAnswer>,
    private readonly ackMs: number,
    private readonly answerMs: number,
  ) {
    this.unsubscribe.push(pubsub.subscribe(SSE_RELAY_CHANNEL, (m) => void this.onRequest(m as Wire)));
    this.unsubscribe.push(pubsub.subscribe(this.replyChannel, (m) => this.onReply(m as Wire)));
  }

  /** The holder's answer, or undefined when no replica acknowledged holding the session. */
  forward(post: RelayedPost): Promise<RelayAnswer | undefined> {
    const rid = randomUUID();
    return new Promise<RelayAnswer | undefined>((resolve, reject) => {
      let timer: NodeJS.Timeout;
      const entry: Waiting = {
        acked: () => {
          clearTimeout(timer);
          timer = setTimeout(
            () =>
              entry.settle(
                badGateway(
                  'SB_ERR_GATEWAY_RELAY_TIMEOUT',
                  `The replica holding this SSE session did not answer within ${Math.round(this.answerMs / 1000)} s`,
                ),
              ),
            this.answerMs,
          );
        },
        settle: (v) => {
          clearTimeout(timer);
          this.waiting.delete(rid);
          if (v instanceof SwitchboardError) reject(v);
          else resolve(v);
        },
      };
      this.waiting.set(rid, entry);
      // No acknowledgement in time: no replica holds the session.
      timer = setTimeout(() => entry.settle(undefined), this.ackMs);
      this.pubsub.publish(SSE_RELAY_CHANNEL, { kind: 'post', rid, replyTo: this.replyChannel, ...post } satisfies Wire);
    });
  }

  private onReply(m: Wire): void {
    const w = this.waiting.get(m.rid);
    if (!w) return;
    if (m.kind === 'ack') w.acked();
    else if (m.kind === 'result') w.settle({ status: m.status, text: m.text });
    else if (m.kind === 'error') w.settle(new SwitchboardError(m.statusCode, m.code, m.detail));
  }

  private async onRequest(m: Wire): Promise<void> {
    if (m.kind !== 'post' || typeof m.sid !== 'string' || !this.holds(m.sid)) return;
    this.pubsub.publish(m.replyTo, { kind: 'ack', rid: m.rid } satisfies Wire);
    let out: Wire;
    try {
      const { sid, server, owner, headers, body } = m;
      out = { kind: 'result', rid: m.rid, ...(await this.handle({ sid, server, owner, headers, body })) };
    } catch (err) {
      const e =
        err instanceof SwitchboardError
          ? err
          : badGateway('SB_ERR_GATEWAY_BACKEND', 'The replica holding this SSE session could not reach its backend');
      out = { kind: 'error', rid: m.rid, statusCode: e.statusCode, code: e.code, detail: String(e.detail) };
    }
    this.pubsub.publish(m.replyTo, out);
  }

  async close(): Promise<void> {
    for (const [, w] of this.waiting) w.settle(undefined);
    await Promise.all(this.unsubscribe.map((u) => u()));
  }
}
