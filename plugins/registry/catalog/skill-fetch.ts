import { badRequest } from '../../../core/errors.ts';
import { refusedClass, type AddressClass } from '../../../core/address-guard.ts';

/**
 * Fetching SKILL.md at registration, with an SSRF guard: private, loopback and
 * link-local addresses are refused unless `registry.allow_private_skill_urls`;
 * cloud metadata addresses are refused always. Redirects are followed by hand
 * so every hop is judged. (A name that resolves differently between the check
 * and the connect is not caught; an egress firewall is the backstop.)
 */

const MAX_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 3;

export interface FetchOptions {
  allowPrivate: boolean;
  timeoutMs: number;
}

export async function checkSkillUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', `skill_md_url must be an absolute http(s) URL, not '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('SB_ERR_REGISTRY_INVALID_URL', 'skill_md_url must use http or https');
  if (url.username || url.password) throw badRequest('SB_ERR_REGISTRY_INVALID_URL', 'skill_md_url must not carry credentials');
  const refused: AddressClass[] = allowPrivate ? ['metadata'] : ['metadata', 'link-local', 'loopback', 'private'];
  const hit = await refusedClass(url, refused);
  if (hit) {
    throw badRequest('SB_ERR_REGISTRY_SKILL_URL_REFUSED', `skill_md_url points to a ${hit} address, which is refused${hit === 'metadata' ? '' : ' (an operator can allow private addresses with registry.allow_private_skill_urls)'}`);
  }
  return url;
}

export async function fetchSkillMd(raw: string, opts: FetchOptions): Promise<string> {
  let url = await checkSkillUrl(raw, opts.allowPrivate);
  for (let hop = 0; ; hop++) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), opts.timeoutMs);
    try {
      let res: Response;
      try {
        res = await fetch(url, { redirect: 'manual', signal: abort.signal, headers: { accept: 'text/markdown, text/plain, */*' } });
      } catch (err) {
        const why = abort.signal.aborted ? `no answer within ${opts.timeoutMs} ms` : (((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
        throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', `SKILL.md could not be fetched from ${url.origin}${url.pathname}: ${why}`);
      }
      if (res.status >= 300 && res.status < 400 && res.headers.get('location')) {
        if (hop >= MAX_REDIRECTS) throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', `SKILL.md fetch followed more than ${MAX_REDIRECTS} redirects`);
        url = await checkSkillUrl(new URL(res.headers.get('location')!, url).toString(), opts.allowPrivate);
        continue;
      }
      if (!res.ok) throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', `SKILL.md could not be fetched: ${url.origin}${url.pathname} answered ${res.status}`);
      const body = Buffer.from(await res.arrayBuffer());
      if (body.length > MAX_BYTES) throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', `SKILL.md is larger than ${MAX_BYTES} bytes`);
      const text = body.toString('utf8');
      if (!text.trim()) throw badRequest('SB_ERR_REGISTRY_SKILL_FETCH', 'SKILL.md is empty');
      return text;
    } finally {
      clearTimeout(timer);
    }
  }
}
