/**
 * IP literals as bytes. The SSRF guard judges the address a connection would
 * reach, so every spelling of one address must come out as the same bytes:
 * `2852039166`, `0251.0376.0251.0376`, `0xa9.0xfe.0xa9.0xfe`, `169.254.43518`,
 * `[::ffff:169.254.169.254]` and the `[::ffff:a9fe:a9fe]` that Node's URL
 * rewrites it to are all 169.254.169.254. Text matching missed the last one.
 */

/** One IPv4 part as the WHATWG URL parser reads it: 0x hex, leading-zero octal, else decimal. */
function v4Part(part: string): number | undefined {
  if (part === '') return undefined;
  let digits = part;
  let radix = 10;
  if (/^0[xX]/.test(part)) {
    digits = part.slice(2);
    radix = 16;
    // `0x` alone is zero for the URL parser.
    if (digits === '') return 0;
    if (!/^[0-9a-fA-F]+$/.test(digits)) return undefined;
  } else if (part.length > 1 && part[0] === '0') {
    digits = part.slice(1);
    radix = 8;
    if (!/^[0-7]+$/.test(digits)) return undefined;
  } else if (!/^[0-9]+$/.test(digits)) {
    return undefined;
  }
  // Long digit runs give huge numbers, which the range checks of the caller refuse.
  const n = parseInt(digits, radix);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * IPv4 in every form inet_aton and the WHATWG URL parser accept: one to four
 * parts, the last filling the remaining bytes (`127.1` is 127.0.0.1), and one
 * trailing dot. Undefined when the text is not an IPv4 literal (a name).
 */
export function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    const n = v4Part(p);
    if (n === undefined) return undefined;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255)) return undefined;
  const lastBytes = 4 - nums.length;
  if (last >= 256 ** lastBytes) return undefined;
  const out = new Uint8Array(4);
  nums.forEach((n, i) => {
    out[i] = n;
  });
  for (let i = 0, v = last; i < lastBytes; i++, v = Math.floor(v / 256)) out[3 - i] = v % 256;
  return out;
}

/** Strict dotted-decimal, as allowed at the end of an IPv6 literal. */
function dottedQuad(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

function groupsOf(text: string): number[] | undefined {
  if (text === '') return [];
  const out: number[] = [];
  const pieces = text.split(':');
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i];
    if (i === pieces.length - 1 && p.includes('.')) {
      const q = dottedQuad(p);
      if (!q) return undefined;
      out.push((q[0] << 8) | q[1], (q[2] << 8) | q[3]);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
      out.push(parseInt(p, 16));
    }
  }
  return out;
}

/** IPv6, with `::`, an embedded dotted IPv4 tail, and a zone (`%eth0`, dropped). */
export function parseIpv6(text: string): Uint8Array | undefined {
  const addr = text.replace(/%.*$/, '');
  if (!addr.includes(':')) return undefined;
  const gap = addr.indexOf('::');
  let groups: number[] | undefined;
  if (gap < 0) {
    groups = groupsOf(addr);
    if (groups?.length !== 8) return undefined;
  } else {
    if (addr.indexOf('::', gap + 1) >= 0) return undefined;
    const head = groupsOf(addr.slice(0, gap));
    const tail = groupsOf(addr.slice(gap + 2));
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/**
 * The bytes of a host that is an IP literal (brackets, one trailing dot and an
 * IPv6 zone allowed), 4 or 16 of them; undefined for a name.
 */
export function parseIp(host: string): Uint8Array | undefined {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return h.includes(':') ? parseIpv6(h) : parseIpv4(h);
}

export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}
