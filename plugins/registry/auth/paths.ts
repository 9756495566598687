/** `/a/b/` and `a/b` name the same resource. */
export function normalizePath(p: string): string {
  // Most paths and rule names are already bare: skip the regex (this runs per rule on every /validate).
  if (p.charCodeAt(0) !== 47 /* / */ && p.charCodeAt(p.length - 1) !== 47) return p;
  return p.replace(/^\/+|\/+$/g, '');
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const HEX_TRIPLET = /%([0-9A-Fa-f]{2})/g;

/** Percent-encoded unreserved characters decoded (`%2e` is a dot, `%7a` a z), other encodings kept with upper-case hex. */
function decodeUnreserved(p: string): string {
  return p.replace(HEX_TRIPLET, (_m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** A `.` or `..` segment, also in the `..;param` form some servlet containers read as `..`. */
function dotSegment(seg: string): '.' | '..' | undefined {
  const semi = seg.indexOf(';');
  const bare = semi < 0 ? seg : seg.slice(0, semi);
  return bare === '.' || bare === '..' ? bare : undefined;
}

function hasDotSegment(path: string): boolean {
  return path.split('/').some((s) => dotSegment(s) !== undefined);
}

/** RFC 3986 5.2.4 on an absolute path (empty segments merged first, as nginx's merge_slashes does). */
function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segs = path.split('/');
  let trailing = false;
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i];
    const dot = dotSegment(s);
    trailing = dot !== undefined || s === '';
    if (dot === '..') out.pop();
    else if (dot === undefined && s !== '') out.push(s);
  }
  return `/${out.join('/')}${trailing && out.length ? '/' : ''}`;
}

/**
 * The path /validate judges, as the server behind the edge will read it:
 * percent-encoded unreserved characters decoded (`%2e` is a dot, `%7a` a z),
 * other encodings kept with upper-case hex, backslashes read as slashes, and
 * dot segments removed (RFC 3986 6.2.2), so `/fz/mcp/../../other/mcp` is
 * judged as `/other/mcp`. An encoded slash or backslash (`%2F`, `%5C`) is kept
 * encoded (the v0 API puts one in server names), unless reading it as a slash
 * would make a dot segment: such a path could climb out of the server it names
 * at a backend that decodes it, so it is refused (undefined).
 * Most paths have no dot, `%` or backslash and are returned as they are.
 */
export function normalizeRequestPath(path: string): string | undefined {
  if (path.indexOf('.') < 0 && path.indexOf('%') < 0 && path.indexOf('\\') < 0) return path;
  let p = path.replace(/\\/g, '/');
  if (p.indexOf('%') >= 0) {
    p = decodeUnreserved(p);
    if (/%2F|%5C/.test(p) && hasDotSegment(p.replace(/%2F|%5C/g, '/'))) return undefined;
  }
  if (p.charCodeAt(0) !== 47 /* / */) p = `/${p}`;
  return hasDotSegment(p) || p.includes('//') ? removeDotSegments(p) : p;
}

/**
 * The path a resource-bound token is judged on when the request is routed by
 * this server itself (not /validate's original URL, which an edge resolves
 * before its backend sees it): normalizeRequestPath's answer, or undefined
 * when the raw path is ambiguous. Fastify's router resolves no dot segments
 * and merges no slashes, but decodes percent-encodings in parameters, so a
 * path with a dot segment (plain, encoded or `..;`), a backslash, an empty
 * segment or an encoded slash next to a dot could be judged as one resource
 * and routed to another; such paths are refused rather than guessed at.
 */
export function routedRequestPath(path: string): string | undefined {
  if (path.indexOf('//') >= 0) return undefined;
  const n = normalizeRequestPath(path);
  if (n === undefined || n === path) return n;
  if (path.indexOf('\\') >= 0) return undefined;
  if (hasDotSegment(path.indexOf('%') >= 0 ? decodeUnreserved(path) : path)) return undefined;
  return n;
}
