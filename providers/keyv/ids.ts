import { randomBytes } from 'node:crypto';

let last = 0;
let seq = 0;

/**
 * Ids that sort by creation time as strings (so a store's key order is event
 * order), unique within a millisecond and across processes.
 */
export function timeOrderedId(): string {
  const now = Date.now();
  seq = now === last ? seq + 1 : 0;
  last = now;
  return `${now.toString(36).padStart(9, '0')}${seq.toString(36).padStart(3, '0')}${randomBytes(4).toString('hex')}`;
}

/** Collection names carry user-chosen names; encode them so `a` and `a:b` never share a key range. */
export const enc = (s: string) => encodeURIComponent(s);
