import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { formatIp, parseIp } from './ip-bytes.ts';

/** Where an address points, for SSRF guards on URLs users register. */
export type AddressClass = 'metadata' | 'link-local' | 'loopback' | 'private' | 'public';

/**
 * Decisions are made on address bytes (core/ip-bytes.ts), never on the text of
 * a host: the same address has many spellings, and a text rule misses some.
 */

// Cloud metadata endpoints (AWS IMDS and ECS/EKS credential agents, Alibaba), by canonical address and by name.
const METADATA_V4 = new Set(['169.254.169.254', '169.254.170.2', '169.254.170.23', '100.100.100.200']);
const METADATA_V6 = new Set(['fd00:ec2:0:0:0:0:0:254']);
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

type Range = readonly [prefix: readonly number[], bits: number, cls: AddressClass];

function inRange(bytes: Uint8Array, prefix: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

// First match wins; anything unlisted is public.
const V4_RANGES: readonly Range[] = [
  // "This network": Linux connects 0.0.0.0/8 destinations to the local host.
  [[0], 8, 'loopback'],
  [[127], 8, 'loopback'],
  [[169, 254], 16, 'link-local'],
  [[10], 8, 'private'],
  [[172, 16], 12, 'private'],
  [[192, 168], 16, 'private'],
  [[100, 64], 10, 'private'],
  [[192, 0, 0], 24, 'private'],
  [[198, 18], 15, 'private'],
  // Multicast, reserved and broadcast: never a backend.
  [[224], 3, 'private'],
];

const V6_RANGES: readonly Range[] = [
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'private'],
  [[0xfc], 7, 'private'],
  [[0xff], 8, 'private'],
  // Local-use NAT64 (RFC 8215): where the IPv4 sits depends on the operator's prefix length, so none is read out.
  [[0, 0x64, 0xff, 0x9b, 0, 1], 48, 'private'],
  // Discard-only.
  [[1, 0, 0, 0, 0, 0, 0, 0], 64, 'private'],
];

/**
 * IPv6 prefixes that carry an IPv4 address, and where: such an address is
 * judged as the IPv4 it reaches (a v4-mapped socket, NAT64, a 6to4 or Teredo
 * relay all end up there).
 */
const V6_EMBEDDING: ReadonlyArray<readonly [prefix: readonly number[], bits: number, at: number, xor: number]> = [
  // IPv4-mapped ::ffff:a.b.c.d
  [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96, 12, 0],
  // IPv4-translated ::ffff:0:a.b.c.d (SIIT)
  [[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], 96, 12, 0],
  // IPv4-compatible ::a.b.c.d (also :: and ::1, which come out as 0.0.0.0/8: the local host)
  [[], 96, 12, 0],
  // NAT64 well-known prefix 64:ff9b::/96
  [[0, 0x64, 0xff, 0x9b], 96, 12, 0],
  // 6to4 2002:V4ADDR::/48
  [[0x20, 0x02], 16, 2, 0],
  // Teredo 2001:0::/32: the client's address, stored inverted in the last 32 bits
  [[0x20, 0x01, 0, 0], 32, 12, 0xff],
];

function classifyV4(bytes: Uint8Array): AddressClass {
  if (METADATA_V4.has(formatIp(bytes))) return 'metadata';
  for (const [prefix, bits, cls] of V4_RANGES) if (inRange(bytes, prefix, bits)) return cls;
  return 'public';
}

/** The class of an address given as 4 or 16 bytes. */
export function classifyBytes(bytes: Uint8Array): AddressClass {
  if (bytes.length === 4) return classifyV4(bytes);
  for (const [prefix, bits, at, xor] of V6_EMBEDDING) {
    if (inRange(bytes, prefix, bits)) return classifyV4(bytes.slice(at, at + 4).map((b) => b ^ xor));
  }
  if (METADATA_V6.has(formatIp(bytes))) return 'metadata';
  for (const [prefix, bits, cls] of V6_RANGES) if (inRange(bytes, prefix, bits)) return cls;
  return 'public';
}

/** The class of an IP literal in any spelling; throws on text that is not an IP address. */
export function classifyIp(ip: string): AddressClass {
  const bytes = parseIp(ip);
  if (!bytes) throw new TypeError(`not an IP address: ${ip}`);
  return classifyBytes(bytes);
}

/** Resolves a name to every address it has (the system resolver unless a test or config supplies one). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** The host as the guard reads it: no brackets, lower case, no trailing dot (`metadata.google.internal.` is the same name). */
function bareHost(hostname: string): string {
  const h = hostname.toLowerCase();
  const unbracketed = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  return unbracketed.endsWith('.') ? unbracketed.slice(0, -1) : unbracketed;
}

interface Judged {
  /** Addresses to connect to, in resolver order (empty when a name did not resolve). */
  addresses: Array<{ address: string; family: 4 | 6 }>;
  /** Every class the host reaches, by name and by address. */
  classes: AddressClass[];
}

async function judgeHost(hostname: string, lookup: HostLookup): Promise<Judged> {
  const host = bareHost(hostname);
  const literal = parseIp(host);
  if (literal)
    return {
      addresses: [{ address: formatIp(literal), family: literal.length === 4 ? 4 : 6 }],
      classes: [classifyBytes(literal)],
    };
  const byName: AddressClass[] = METADATA_NAMES.has(host)
    ? ['metadata']
    : host === 'localhost' || host.endsWith('.localhost')
      ? ['loopback']
      : [];
  let found: Awaited<ReturnType<HostLookup>>;
  try {
    found = await lookup(host);
  } catch (err) {
    // A name judged by itself (localhost, a metadata name) keeps its class even when it does not resolve.
    if (byName.length) return { addresses: [], classes: byName };
    throw err;
  }
  const addresses: Judged['addresses'] = [];
  const classes = new Set(byName);
  for (const a of found) {
    const bytes = parseIp(a.address);
    if (!bytes) continue;
    addresses.push({ address: formatIp(bytes), family: bytes.length === 4 ? 4 : 6 });
    classes.add(classifyBytes(bytes));
  }
  return { addresses, classes: [...classes] };
}

/**
 * Every class the URL's host reaches (a name may resolve to several
 * addresses; each is judged). A name that does not resolve gives an empty list:
 * nothing can connect to it either, and the connect-time check (pinnedLookup)
 * judges whatever it resolves to later.
 */
export async function classifyUrl(url: URL, lookup: HostLookup = systemLookup): Promise<AddressClass[]> {
  const host = bareHost(url.hostname);
  if (METADATA_NAMES.has(host)) return ['metadata'];
  try {
    return (await judgeHost(host, lookup)).classes;
  } catch {
    return [];
  }
}

/** The first refused class the URL reaches, or undefined when it is allowed. */
export async function refusedClass(
  url: URL,
  refused: readonly AddressClass[],
  lookup: HostLookup = systemLookup,
): Promise<AddressClass | undefined> {
  const classes = await classifyUrl(url, lookup);
  return classes.find((c) => refused.includes(c));
}

/** Which classes a caller refuses, and how names are resolved. */
export interface AddressPolicy {
  refused: readonly AddressClass[];
  lookup?: HostLookup;
}

/** A connection refused by the address guard at connect time. */
export class AddressRefusedError extends Error {
  readonly code = 'SB_ERR_ADDRESS_REFUSED';
  override readonly name = 'AddressRefusedError';
  constructor(
    readonly host: string,
    readonly addressClass: AddressClass,
  ) {
    super(`${host} reaches a ${addressClass} address, which is refused`);
  }
}

/**
 * Resolve once, judge every address, and return the one to connect to. The
 * connection then goes to exactly this address, so a name that answers with a
 * public address to an earlier check and a private one now (DNS rebinding) is
 * judged on what it answers now.
 */
export async function pinnedAddress(
  hostname: string,
  policy: AddressPolicy,
): Promise<{ address: string; family: 4 | 6 }> {
  const judged = await judgeHost(hostname, policy.lookup ?? systemLookup);
  const bad = judged.classes.find((c) => policy.refused.includes(c));
  if (bad) throw new AddressRefusedError(bareHost(hostname), bad);
  const first = judged.addresses[0];
  if (!first)
    throw Object.assign(new Error(`${bareHost(hostname)} did not resolve to any address`), { code: 'ENOTFOUND' });
  return first;
}

/**
 * An undici connector that connects to pinnedAddress(host) and nothing else.
 * TLS still names the original host (SNI and certificate check), since the
 * connector receives it as `host` and derives the server name from it.
 */
export function pinnedConnector(
  policy: AddressPolicy,
  options: buildConnector.BuildOptions = {},
): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) => {
    pinnedAddress(opts.hostname, policy).then(
      ({ address }) => connect({ ...opts, hostname: address }, callback),
      (err: Error) => callback(err, null),
    );
  };
}

/** A dispatcher whose every connection goes through pinnedConnector (for fetch and undici.request). */
export function pinnedAgent(policy: AddressPolicy, options: Omit<Agent.Options, 'connect'> = {}): Dispatcher {
  return new Agent({ ...options, connect: pinnedConnector(policy) });
}

/** The guard's refusal, wherever undici wrapped it (fetch puts it in `cause`). */
export function addressRefusal(err: unknown): AddressRefusedError | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AddressRefusedError) return e;
  }
  return undefined;
}
