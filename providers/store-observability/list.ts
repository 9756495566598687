import { badRequest } from '../../core/errors.ts';
import type { Collection } from '../../core/store-types.ts';
import { randomDigits } from './random-pool.ts';

/**
 * What is stored per record: the record as JSON text, its time, and a sort key.
 * The JSON is made here because the store's own serialiser walks nested values
 * key by key (several times slower for a trace with spans: it was most of what
 * auto_trace cost a chat); time and `seq` sit beside it so retention and time
 * ranges never parse a record. `seq` orders records written in the same
 * millisecond (a log burst) newest first, which timestamps alone cannot; it is
 * never shown to clients.
 */
export interface Stored<_T> {
  j: string;
  t: string;
  seq: string;
}

export const wrap = <T extends { timestamp: string }>(v: T, seq = nextSeq()): Stored<T> => ({
  j: JSON.stringify(v),
  t: v.timestamp,
  seq,
});
export const unwrap = <T>(s: Stored<T>): T => JSON.parse(s.j) as T;

let counter = 0;
let lastMs = -1;
let msPart = '';
/**
 * Time-ordered and unique enough across processes: milliseconds, a process counter, a random tail. The time
 * part is made once per millisecond and the tail comes from the id pool: built afresh per record (toString(36)
 * of Date.now() and of Math.random()) it cost ~1.8 us of each traced chat.
 */
export function nextSeq(): string {
  counter = (counter + 1) % 1_679_616; // 36^4
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    msPart = now.toString(36).padStart(9, '0');
  }
  return `${msPart}${counter.toString(36).padStart(4, '0')}${randomDigits(4)}`;
}

export interface Window {
  limit: number;
  offset: number;
  from?: string;
  to?: string;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  next_cursor: string | null;
}

type Key = [time: string, seq: string];
const after = (a: Key, b: Key) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export function decodeCursor(cursor: string): Key {
  try {
    const k = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(k) && k.length === 2 && typeof k[0] === 'string' && typeof k[1] === 'string') return [k[0], k[1]];
  } catch {
    // fall through: the message below says what to do
  }
  throw badRequest(
    'SB_ERR_OBSERVABILITY_BAD_CURSOR',
    `cursor '${cursor}' is not a next_cursor from a previous page; omit it to start at the newest record`,
  );
}

export const encodeCursor = (k: Key) => Buffer.from(JSON.stringify(k), 'utf8').toString('base64url');

export interface Hit<T> {
  v: T;
  k: [time: string, seq: string];
}

/** The records of a collection within the window's time range that `keep` accepts. */
export async function hitsOf<T>(col: Collection<Stored<T>>, keep: (v: T) => boolean, w: Window): Promise<Hit<T>[]> {
  const hits: Hit<T>[] = [];
  for await (const [, s] of col.entries()) {
    if (!inRange(s.t, w)) continue;
    const v = unwrap(s);
    if (keep(v)) hits.push({ v, k: [s.t, s.seq] });
  }
  return hits;
}

export const inRange = (t: string, w: Pick<Window, 'from' | 'to'>) =>
  (w.from === undefined || t >= w.from) && (w.to === undefined || t < w.to);

/** Order newest first and cut the page (by cursor, else offset). */
export function pageOf<T>(hits: Hit<T>[], w: Window): Page<T> {
  const cursor = w.cursor === undefined ? undefined : decodeCursor(w.cursor);
  hits.sort((a, b) => (after(a.k, b.k) ? 1 : after(b.k, a.k) ? -1 : 0));
  const start = cursor ? hits.findIndex((h) => after(h.k, cursor)) : w.offset;
  const from = start < 0 ? hits.length : start;
  const page = hits.slice(from, from + w.limit);
  const more = from + w.limit < hits.length;
  return {
    items: page.map((h) => h.v),
    total: hits.length,
    next_cursor: more && page.length ? encodeCursor(page[page.length - 1]!.k) : null,
  };
}

/**
 * Filter, order newest first and window a collection. Every record is read:
 * the store has no secondary indexes, and retention (retention.ts) keeps the
 * collections bounded so a scan stays cheap.
 */
export async function listOf<T>(col: Collection<Stored<T>>, keep: (v: T) => boolean, w: Window): Promise<Page<T>> {
  if (w.cursor !== undefined) decodeCursor(w.cursor); // a bad cursor is a 400 before any reading
  return pageOf(await hitsOf(col, keep, w), w);
}
