import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { unavailable } from '../../../core/errors.ts';
import type { CallerCredentials } from '../../../core/provider.ts';
import type { OidcSourceSettings } from './settings.ts';

/**
 * The `oidc` credentials source (spec 5.7): the user's attributes as the
 * identity provider's userinfo endpoint returns them for the caller's own
 * access token. Attributes named `<prefix><service>.<key>` (prefix `apg.` by
 * default, the reference's convention) become the credential `key` of
 * `service`, exactly as an `X-Cred-<Service>-<Key>` header would; a name with
 * no second dot goes to the service `_global`. Other claims (sub, email, ...)
 * are not credentials and are ignored. Answers are cached per token, for no
 * longer than the token lives, in a bounded map; values are never logged.
 */
export interface OidcSource {
  /** The caller's mapped credentials; empty when the profile holds none or the userinfo refuses the token. */
  resolve(accessToken: string): Promise<CallerCredentials['service']>;
}

export function mapAttributes(claims: Record<string, unknown>, prefix: string): CallerCredentials['service'] {
  const out: CallerCredentials['service'] = {};
  // Nested claim objects ({"apg": {"langfuse": {...}}}) read as their dotted names.
  const flat = (obj: Record<string, unknown>, at: string, into: Array<[string, unknown]>) => {
    for (const [k, v] of Object.entries(obj)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) flat(v as Record<string, unknown>, `${at}${k}.`, into);
      else into.push([`${at}${k}`, v]);
    }
    return into;
  };
  for (const [name, raw] of flat(claims, '', [])) {
    if (!name.startsWith(prefix)) continue;
    // Keycloak sends multivalued attributes as lists: the first value is the credential.
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const rest = name.slice(prefix.length);
    if (!rest) continue;
    const dot = rest.indexOf('.');
    const [service, key] = dot > 0 ? [rest.slice(0, dot), rest.slice(dot + 1)] : ['_global', rest];
    if (!key) continue;
    (out[service.toLowerCase()] ??= {})[key] = String(value);
  }
  return out;
}

export function oidcSource(settings: OidcSourceSettings, fallbackIssuer: () => string | undefined): OidcSource {
  const cache = new Map<string, { until: number; creds: CallerCredentials['service'] }>();
  let endpoint: Promise<{ url: string; issuer: string }> | undefined;

  const down = (where: string, why: unknown) =>
    unavailable(
      'SB_ERR_CREDENTIALS_IDP_UNAVAILABLE',
      `The identity provider ${where} cannot be reached to read the user's credential attributes: ${why instanceof Error ? why.message : String(why)}`,
      why,
    );

  const userinfoUrl = () => {
    endpoint ??= (async () => {
      const issuer = (settings.issuer ?? fallbackIssuer())?.replace(/\/+$/, '');
      if (settings.userinfo_url) return { url: settings.userinfo_url, issuer: issuer ?? settings.userinfo_url };
      if (!issuer)
        throw unavailable(
          'SB_ERR_CREDENTIALS_IDP_UNAVAILABLE',
          'platform.credentials.oidc names no issuer or userinfo_url, and the auth backend is not jwt: there is no identity provider to read attributes from',
        );
      let doc: { userinfo_endpoint?: unknown };
      try {
        const res = await fetch(`${issuer}/.well-known/openid-configuration`, {
          signal: AbortSignal.timeout(settings.timeout_ms),
        });
        if (!res.ok) throw new Error(`its discovery document answered ${res.status}`);
        doc = (await res.json()) as typeof doc;
      } catch (err) {
        throw down(issuer, err);
      }
      if (typeof doc.userinfo_endpoint !== 'string')
        throw down(issuer, new Error('its discovery document names no userinfo_endpoint'));
      return { url: doc.userinfo_endpoint, issuer };
    })();
    // A failed discovery is tried again on the next request: the issuer may come back.
    endpoint.catch(() => (endpoint = undefined));
    return endpoint;
  };

  const remember = (key: string, token: string, creds: CallerCredentials['service']) => {
    let exp = Number.POSITIVE_INFINITY;
    try {
      const claims = decodeJwt(token);
      if (typeof claims.exp === 'number') exp = claims.exp * 1000;
    } catch {
      // An opaque token: the TTL alone bounds the entry.
    }
    const until = Math.min(exp, Date.now() + settings.cache_ttl_seconds * 1000);
    cache.delete(key);
    cache.set(key, { until, creds });
    // Oldest first out: a Map iterates in insertion order, and a hit re-inserts.
    while (cache.size > settings.cache_max_entries) cache.delete(cache.keys().next().value as string);
  };

  return {
    async resolve(token) {
      const key = createHash('sha256').update(token).digest('base64url');
      const hit = cache.get(key);
      if (hit && hit.until > Date.now()) {
        cache.delete(key);
        cache.set(key, hit);
        return hit.creds;
      }
      if (hit) cache.delete(key);
      const { url, issuer } = await userinfoUrl();
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
          signal: AbortSignal.timeout(settings.timeout_ms),
        });
      } catch (err) {
        throw down(`${issuer} (userinfo ${url})`, err);
      }
      // The userinfo does not take this token (a service token, a foreign audience): the caller has no profile here.
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel();
        remember(key, token, {});
        return {};
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw down(`${issuer} (userinfo ${url})`, new Error(`it answered ${res.status}`));
      }
      const claims = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      const creds = mapAttributes(claims, settings.prefix);
      remember(key, token, creds);
      return creds;
    },
  };
}
