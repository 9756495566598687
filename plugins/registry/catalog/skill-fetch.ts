import { badRequest } from '../../../core/errors.ts';
import { fetch as undiciFetch } from 'undici';
import {
  addressRefusal,
  pinnedAgent,
  refusedClass,
  type AddressClass,
  type AddressPolicy,
  type HostLookup,
} from '../../../core/address-guard.ts';

/**
 * Fetching SKILL.md at registration, with an SSRF guard: private, loopback and
 * link-local addresses are refused unless `registry.allow_private_skill_urls`;
 * cloud metadata addresses are refused always. Redirects are followed by hand
 * so every hop is judged before it is requested, and the connection itself is
 * judged again at connect time on the address it goes to (a pinned agent), so
 * a name that answers differently between the check and the connect (DNS
 * rebinding) is refused too.
 */

const MAX_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 3;

export interface FetchOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Name resolution (tests simulate DNS); the system resolver by default. */
  lookup?: HostLookup;
}

function policyOf(allowPrivate: boolean, lookup?: HostLookup): AddressPolicy {
  return { refused: allowPrivate ? ['metadata'] : ['metadata', 'link-local', 'loopback', 'private'], lookup };
}

function refusedDetail(hit: AddressClass): string {
  return `skill_md_url points to a ${hit} address, which is refused${hit === 'metadata' ? '' : ' (an operator can allow private addresses with registry.allow_private_skill_urls)'}`;
}

export async function checkSkillUrl(raw: string, allowPrivate: boolean, lookup?: HostLookup): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', `skill_md_url must be an absolute http(s) URL, not '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', 'skill_md_url must use http or https');
  if (url.username || url.password)
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', 'skill_md_url must not carry credentials');
  const policy = policyOf(allowPrivate, lookup);
  const hit = await refusedClass(url, policy.refused, lookup);
  if (hit) throw badRequest('SB_ERR_REGISTRY_SKILL_URL_REFUSED', refusedDetail(hit));
  return url;
}

export async function fetchSkillMd(raw: string, opts: FetchOptions): Promise<string> {
  const url = await checkSkillUrl(raw, opts.allowPrivate, opts.lookup);
  const dispatcher = pinnedAgent(policyOf(opts.allowPrivate, opts.lookup));
  try {
    return await fetchHops(url, opts, dispatcher);
  } finally {
    void dispatcher.close();
  }
}

async function fetchHops(first: URL, opts: FetchOptions, dispatcher: ReturnType<typeof pinnedAgent>): Promise<string> {
  let url = first;
  for (let hop = 0; ; hop++) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), opts.timeoutMs);
    try {
      let res: Awaited<ReturnType<typeof undiciFetch>>;
      try {
        res = await undiciFetch(url, {
          redirect: 'manual',
          signal: abort.signal,
          headers: { accept: 'text/markdown, text/plain, */*' },
          dispatcher,
        });
      } catch (err) {
        const refused = addressRefusal(err);
        if (refused)
          throw badRequest(
            'SB_ERR_REGISTRY_SKILL_URL_REFUSED',
            `${refusedDetail(refused.addressClass)} (${refused.host} resolved there when the fetch connected)`,
          );
        const why = abort.signal.aborted
          ? `no answer within ${opts.timeoutMs} ms`
          : (((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
        throw badRequest(
          'SB_ERR_REGISTRY_SKILL_FETCH',
          `SKILL.md could not be fetched from ${url.origin}${url.pathname}: ${why}`,
        );
      }
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        if (hop >= MAX_REDIRECTS)
          throw badRequest(
            'SB_ERR_REGISTRY_SKILL_FETCH',
            `SKILL.md fetch followed more than ${MAX_REDIRECTS} redirects`,
          );
        url = await checkSkillUrl(
          new URL(res.headers.get('location')!, url).toString(),
          opts.allowPrivate,
          opts.lookup,
        );
        continue;
      }
      if (!res.ok)
        throw badRequest(
          'SB_ERR_REGISTRY_SKILL_FETCH',
          `SKILL.md could not be fetched: ${url.origin}${url.pathname} answered ${res.status}`,
        );
      const body = Buffer.from(await res.arrayBuffer());
      if (body.length > MAX_BYTES)
        throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', `SKILL.md is larger than ${MAX_BYTES} bytes`);
      const text = body.toString('utf8');
      if (!text.trim()) throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', 'SKILL.md is empty');
      return text;
    } finally {
      clearTimeout(timer);
    }
  }
}
