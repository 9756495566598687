/**
 * Redis publish/subscribe for replicas that share a Redis store: one channel
 * per use, JSON messages, each tagged with the sending process so it can skip
 * its own. Two connections (a subscribed connection can do nothing else).
 * Delivery is best effort, as Redis pub/sub is: a replica that is disconnected
 * when a message is sent never gets it, so users must treat messages as hints
 * on top of state kept in the store. While Redis is down, publish() drops the
 * message (the store is down too, so the change it announces did not happen);
 * both connections reconnect by themselves.
 */
import { randomUUID } from 'node:crypto';

export interface PubSub {
  publish(channel: string, message: unknown): void;
  /** Messages from other processes on `channel`; the returned function unsubscribes. */
  subscribe(channel: string, fn: (message: unknown) => void): () => Promise<void>;
  close(): Promise<void>;
}

interface Envelope {
  from: string;
  message: unknown;
}

export async function openPubSub(url: string, onError: (err: Error) => void = () => {}): Promise<PubSub> {
  const { createClient } = await import('@keyv/redis');
  const options = {
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (n: number) => Math.min(n * 100, 2000) },
  };
  const pub = createClient(options);
  // The subscriber queues its SUBSCRIBE until connected (and node-redis subscribes again after a reconnect).
  const sub = createClient({ ...options, disableOfflineQueue: false });
  pub.on('error', onError);
  sub.on('error', onError);
  // Not awaited: a replica that starts while Redis is down still starts (its store says it is down);
  // the clients connect when Redis answers.
  void pub.connect().catch(onError);
  void sub.connect().catch(onError);
  const self = randomUUID();
  return {
    publish(channel, message) {
      if (!pub.isReady) return;
      pub.publish(channel, JSON.stringify({ from: self, message } satisfies Envelope)).catch(onError);
    },
    subscribe(channel, fn) {
      const listener = (raw: string) => {
        let env: Envelope;
        try {
          env = JSON.parse(raw) as Envelope;
        } catch {
          return;
        }
        if (env.from !== self) fn(env.message);
      };
      void sub.subscribe(channel, listener).catch(onError);
      return async () => {
        // Only while connected: the subscriber queues commands offline, so an UNSUBSCRIBE sent while Redis is down
        // would wait for Redis to come back (and hold up a shutdown). close() drops the subscriptions anyway.
        if (sub.isReady) await sub.unsubscribe(channel, listener).catch(onError);
      };
    },
    async close() {
      // unref first: a socket still connecting when destroy() runs is not destroyed with its client
      // (node-redis assigns it after), and it must not keep a process that is shutting down alive.
      for (const c of [pub, sub]) {
        c.unref();
        if (c.isOpen) c.destroy();
      }
    },
  };
}
