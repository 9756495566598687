/**
 * Limits on the shape of JSON that callers send, checked on the raw text before
 * JSON.parse. Deeply nested values parse fine but later overflow the stack in
 * every recursive walker they meet (keyv's serialiser, structuredClone, response
 * serialisers), so one poisoned record used to break the lists that hold it.
 * The scan is a loop over the text with a fixed-size stack: no recursion, and
 * strings are skipped with indexOf so long text values cost native speed.
 */

export interface JsonLimits {
  /** Most nested objects/arrays (the body itself is level 1). */
  maxDepth: number;
  /** Most members in one object (free-form `metadata`, `config`, ...). */
  maxObjectKeys: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 32, maxObjectKeys: 1000 };

export interface JsonLimitViolation {
  limit: 'depth' | 'keys';
  /** Where in the text the limit was crossed (the bracket or the comma). */
  offset: number;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const COMMA = 44;

/** The index of the quote that closes the string opened at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let j = text.indexOf('"', start + 1);
  while (j !== -1) {
    let slashes = 0;
    for (let k = j - 1; text.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

let commasBuf = new Int32Array(DEFAULT_JSON_LIMITS.maxDepth + 1);
let isObjectBuf = new Uint8Array(DEFAULT_JSON_LIMITS.maxDepth + 1);

/**
 * The first place the text crosses a limit, or undefined. Invalid JSON is not
 * this function's concern: it answers for what it saw, and JSON.parse refuses
 * the rest.
 */
export function scanJsonLimits(text: string, limits: JsonLimits): JsonLimitViolation | undefined {
  const { maxDepth, maxObjectKeys } = limits;
  // Members are counted by commas: an object with maxObjectKeys commas has one member too many.
  // The per-level arrays are reused across calls (the scan is synchronous) to keep a small body's
  // check free of allocations.
  if (commasBuf.length <= maxDepth) {
    commasBuf = new Int32Array(maxDepth + 1);
    isObjectBuf = new Uint8Array(maxDepth + 1);
  }
  const commas = commasBuf;
  const isObject = isObjectBuf;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return undefined;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === maxDepth) return { limit: 'depth', offset: i };
      depth++;
      isObject[depth] = c === OPEN_OBJECT ? 1 : 0;
      commas[depth] = 0;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (c === COMMA && isObject[depth] === 1 && ++commas[depth] >= maxObjectKeys) {
      return { limit: 'keys', offset: i };
    }
  }
  return undefined;
}

const MAX_KEY_SHOWN = 64;

/**
 * The keys and indexes leading to `offset` (for the 422's `loc`), from a second
 * pass that runs only when a limit was crossed. The entry for the container
 * that holds `offset` names the member being read there.
 */
export function jsonPathAt(text: string, offset: number): Array<string | number> {
  const path: Array<string | number> = [];
  const objects: boolean[] = [];
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1 || end >= offset) break;
      if (objects[objects.length - 1] === true && /^\s*:/.test(text.slice(end + 1, end + 33))) {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          key = text.slice(i + 1, end);
        }
        path[path.length - 1] = key.length > MAX_KEY_SHOWN ? `${key.slice(0, MAX_KEY_SHOWN)}…` : key;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      objects.push(c === OPEN_OBJECT);
      path.push(c === OPEN_OBJECT ? '' : 0);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      objects.pop();
      path.pop();
    } else if (c === COMMA && objects[objects.length - 1] === false) {
      (path[path.length - 1] as number)++;
    }
  }
  return path;
}
