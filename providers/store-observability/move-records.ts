import type { FastifyBaseLogger } from 'fastify';
import type { Collection } from '../../core/store-types.ts';
import type { Stored } from './list.ts';
import type { Collections } from './records.ts';

const CHUNK = 500;

/**
 * Records an earlier version kept in the core store's file move to the
 * provider's own file (sqlite-writer.ts) when it starts, so an upgrade loses
 * no trace. Each chunk is written before its keys are deleted from the core
 * file: a crash midway leaves a record in both places (moved again, same key,
 * same value, on the next start), never in neither. Nothing to move is four
 * empty range scans.
 */
export async function moveRecords(
  from: Collections,
  to: Collections,
  logger: FastifyBaseLogger | undefined,
): Promise<number> {
  let moved = 0;
  for (const kind of ['traces', 'logs', 'generations', 'scores'] as const) {
    const src = from[kind] as Collection<Stored<unknown>>;
    const dst = to[kind] as Collection<Stored<unknown>>;
    let chunk: Array<{ key: string; value: Stored<unknown> }> = [];
    const flush = async () => {
      if (dst.setMany) await dst.setMany(chunk);
      else for (const { key, value } of chunk) await dst.set(key, value);
      for (const { key } of chunk) await src.delete(key);
      moved += chunk.length;
      chunk = [];
    };
    // Collected first: deleting from a collection while its scan is open is not safe on every backend.
    const all: Array<{ key: string; value: Stored<unknown> }> = [];
    for await (const [key, value] of src.entries()) all.push({ key, value });
    for (const e of all) {
      chunk.push(e);
      if (chunk.length >= CHUNK) await flush();
    }
    if (chunk.length) await flush();
  }
  if (moved > 0) logger?.info({ moved }, 'observability records moved from the core store to their own file');
  return moved;
}
