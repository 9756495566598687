import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Where an address points, for SSRF guards on URLs users register. */
export type AddressClass = 'metadata' | 'link-local' | 'loopback' | 'private' | 'public';

// Cloud metadata endpoints, by address and by name (they must never be a backend).
const METADATA_IPS = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

function v4(addr: string): number[] {
  return addr.split('.').map(Number);
}

export function classifyIp(ip: string): AddressClass {
  const addr = ip.toLowerCase().replace(/^\[|\]$/g, '');
  if (METADATA_IPS.has(addr)) return 'metadata';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (mapped) return classifyIp(mapped[1]);
  if (isIP(addr) === 4) {
    const [a, b] = v4(addr);
    if (a === 169 && b === 254) return 'link-local';
    if (a === 127 || a === 0) return 'loopback';
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'private';
    return 'public';
  }
  if (isIP(addr) === 6) {
    if (addr === '::1' || addr === '::') return 'loopback';
    if (/^fe[89ab]/.test(addr)) return 'link-local';
    if (/^f[cd]/.test(addr)) return 'private';
    return 'public';
  }
  return 'public';
}

/**
 * Every class the URL's host resolves to (a name may resolve to several
 * addresses; each is judged). Unresolvable names give an empty list.
 */
export async function classifyUrl(url: URL): Promise<AddressClass[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (METADATA_NAMES.has(host)) return ['metadata'];
  if (isIP(host)) return [classifyIp(host)];
  if (host === 'localhost' || host.endsWith('.localhost')) return ['loopback'];
  try {
    const addrs = await lookup(host, { all: true });
    return [...new Set(addrs.map((a) => classifyIp(a.address)))];
  } catch {
    return [];
  }
}

/** The first refused class the URL reaches, or undefined when it is allowed. */
export async function refusedClass(url: URL, refused: readonly AddressClass[]): Promise<AddressClass | undefined> {
  const classes = await classifyUrl(url);
  return classes.find((c) => refused.includes(c));
}
