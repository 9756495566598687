/**
 * The JSON-RPC calls of an X-Body header, read without building the document.
 *
 * /validate needs two strings out of each call (`method`, and `params.name`
 * for tools/call), and `JSON.parse` was the largest single cost of the check:
 * it allocates every object and interns every key of a body whose arguments
 * nobody here reads. This scanner walks the text once, checks all of it
 * against the JSON grammar (RFC 8259), and keeps only those two strings, with
 * JSON.parse's reading of duplicate keys (the last one wins).
 *
 * It never guesses. It answers `undefined`, and the caller falls back to
 * JSON.parse, on anything it does not take: invalid JSON, an escape inside a
 * key, a method or a tool name, nesting deeper than MAX_DEPTH, or a control
 * character anywhere (tabs and line breaks included: a header holds none, and
 * without them the only whitespace left is the space). So what it does answer
 * is what JSON.parse would have led to; a property test compares the two on
 * generated and broken bodies.
 *
 * One function with its state in locals, on purpose: split into a function
 * per grammar rule sharing a cursor, it ran no faster than JSON.parse.
 */

export interface RpcCall {
  method: string;
  tool?: string;
}

const MAX_DEPTH = 64;
const OBJECT = 1;
const ARRAY = 2;
// What an open object is to the scan: a call (its method and params count), a call's params (its name counts), or neither.
const PLAIN = 0;
const CALL = 1;
const PARAMS = 2;
// What the value being read is for.
const IGNORED = 0;
const METHOD = 1;
const PARAMS_VALUE = 2;
const TOOL = 3;

// Scratch stacks for open containers: a scan never awaits, so one pair serves every call.
const kinds = new Uint8Array(MAX_DEPTH + 1);
const roles = new Uint8Array(MAX_DEPTH + 1);

/** A character code, or -1 past the end (charCodeAt's NaN would make every comparison a float one). */
const code = (s: string, i: number) => (i < s.length ? s.charCodeAt(i) : -1);

const CONTROL = /[\x00-\x1f]/;

const nextBackslash = (s: string, from: number) => {
  const at = s.indexOf('\\', from);
  return at < 0 ? s.length : at;
};

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** The calls of a JSON-RPC body (one call or a batch), or undefined when the scanner does not take this text. */
export function scanRpcCalls(s: string): RpcCall[] | undefined {
  const calls: RpcCall[] = [];
  let i = 0;
  let top = 0;
  let slot = IGNORED;
  let method: string | undefined;
  let tool: string | undefined;
  // Control characters are invalid inside strings and, but for tab, LF and CR, outside them too. A header
  // holds none, so any at all sends the text to JSON.parse. Past this check the only whitespace is the
  // space, and the string reads below can search for their closing quote natively.
  if (CONTROL.test(s)) return undefined;
  // The next backslash at or after the string being read (s.length: none), found once per stretch of text.
  let backslash = -1;
  let c = code(s, 0);
  while (c === 32) c = code(s, ++i);
  // Calls are the body itself, or the members of a top-level array (a batch).
  const callDepth = c === 91 ? 1 : 0;

  // An object just opened with a member in it: its first key comes next, not a comma.
  let keyNext = false;

  for (;;) {
    // A value starts at i (whitespace skipped).
    c = code(s, i);
    if (c === 123 /* { */ || c === 91 /* [ */) {
      if (top === MAX_DEPTH) return undefined;
      if (slot === METHOD) method = undefined;
      else if (slot === PARAMS_VALUE || slot === TOOL) tool = undefined;
      top++;
      kinds[top] = c === 91 ? ARRAY : OBJECT;
      if (c === 91) roles[top] = PLAIN;
      else if (top === callDepth + 1) {
        roles[top] = CALL;
        method = undefined;
        tool = undefined;
      } else roles[top] = slot === PARAMS_VALUE ? PARAMS : PLAIN;
      const close = c === 91 ? 93 : 125;
      c = code(s, ++i);
      while (c === 32) c = code(s, ++i);
      if (c === close) {
        // Empty: a call without members has no method, so nothing to keep.
        i++;
        top--;
      } else if (close === 93) {
        slot = IGNORED;
        continue;
      } else {
        keyNext = true;
      }
    } else if (c === 34 /* " */) {
      const start = ++i;
      i = s.indexOf('"', start);
      if (i < 0) return undefined;
      if (backslash < start) backslash = nextBackslash(s, start);
      const escaped = backslash < i;
      if (escaped) {
        // The quote found may be an escaped one: walk this string escape by escape.
        i = start;
        for (;;) {
          c = code(s, i);
          if (c === 34) break;
          if (c === -1) return undefined;
          if (c !== 92) {
            i++;
            continue;
          }
          const e = code(s, i + 1);
          if (e === 117) {
            if (!(isHex(code(s, i + 2)) && isHex(code(s, i + 3)) && isHex(code(s, i + 4)) && isHex(code(s, i + 5))))
              return undefined;
            i += 6;
          } else if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
            i += 2;
          } else {
            return undefined;
          }
        }
        backslash = nextBackslash(s, i);
      }
      if (slot === METHOD || slot === TOOL) {
        if (escaped) return undefined;
        if (slot === METHOD) method = s.slice(start, i);
        else tool = s.slice(start, i);
      } else if (slot === PARAMS_VALUE) {
        tool = undefined;
      }
      i++;
    } else {
      if (c === 116 /* t */) {
        if (!s.startsWith('true', i)) return undefined;
        i += 4;
      } else if (c === 102 /* f */) {
        if (!s.startsWith('false', i)) return undefined;
        i += 5;
      } else if (c === 110 /* n */) {
        if (!s.startsWith('null', i)) return undefined;
        i += 4;
      } else {
        // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
        if (c === 45) c = code(s, ++i);
        if (c === 48) c = code(s, ++i);
        else if (c >= 49 && c <= 57) while (c >= 48 && c <= 57) c = code(s, ++i);
        else return undefined;
        if (c === 46) {
          c = code(s, ++i);
          if (!(c >= 48 && c <= 57)) return undefined;
          while (c >= 48 && c <= 57) c = code(s, ++i);
        }
        if (c === 101 || c === 69) {
          c = code(s, ++i);
          if (c === 43 || c === 45) c = code(s, ++i);
          if (!(c >= 48 && c <= 57)) return undefined;
          while (c >= 48 && c <= 57) c = code(s, ++i);
        }
      }
      if (slot === METHOD) method = undefined;
      else if (slot === PARAMS_VALUE || slot === TOOL) tool = undefined;
    }

    // A value ended: close containers until a comma (or the end of the text), then read the next key or element.
    for (;;) {
      if (keyNext) {
        keyNext = false;
      } else {
        c = code(s, i);
        while (c === 32) c = code(s, ++i);
        if (top === 0) return i === s.length ? calls : undefined;
        i++;
        if (c === 125 /* } */ && kinds[top] === OBJECT) {
          if (roles[top] === CALL && method !== undefined)
            calls.push({ method, tool: method === 'tools/call' ? tool : undefined });
          top--;
          continue;
        }
        if (c === 93 /* ] */ && kinds[top] === ARRAY) {
          top--;
          continue;
        }
        if (c !== 44 /* , */) return undefined;
        c = code(s, i);
        while (c === 32) c = code(s, ++i);
        if (kinds[top] === ARRAY) {
          slot = IGNORED;
          break;
        }
      }
      // A key, then a colon.
      if (c !== 34) return undefined;
      const start = ++i;
      i = s.indexOf('"', start);
      if (i < 0) return undefined;
      if (backslash < start) backslash = nextBackslash(s, start);
      // An escaped key (one could spell "method"): JSON.parse decides.
      if (backslash < i) return undefined;
      const length = i - start;
      const role = roles[top];
      slot = IGNORED;
      if (role === CALL) {
        if (length === 6 && s.startsWith('method', start)) slot = METHOD;
        else if (length === 6 && s.startsWith('params', start)) slot = PARAMS_VALUE;
      } else if (role === PARAMS && length === 4 && s.startsWith('name', start)) {
        slot = TOOL;
      }
      c = code(s, ++i);
      while (c === 32) c = code(s, ++i);
      if (c !== 58 /* : */) return undefined;
      c = code(s, ++i);
      while (c === 32) c = code(s, ++i);
      break;
    }
  }
}
