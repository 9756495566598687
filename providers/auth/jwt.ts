import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { unavailable } from '../../core/errors.ts';
import type { AuthBackend } from '../../core/primitives/auth.ts';
import type { Health, ProviderFactory } from '../../core/provider.ts';
import { principalFromClaims } from './claims.ts';
import { presentedCredential } from './credentials.ts';
import { JwtOptions, parseOptions } from './options.ts';

// jose errors that mean "the token is bad" (401) rather than "we could not check it" (503).
const UPSTREAM_CODES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);
const isTokenError = (err: unknown) => err instanceof errors.JOSEError && !UPSTREAM_CODES.has(err.code);

async function fetchJson(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * OIDC access tokens (JWT): signature against the issuer's JWKS (from the
 * `jwks_uri` option or the issuer's discovery document), `iss` and `aud`
 * required, groups and scopes read from configurable claims.
 */
export const jwtAuth: ProviderFactory<AuthBackend> = {
  type: 'jwt',
  kind: 'auth',
  description: 'OIDC/JWT bearer tokens verified against the issuer JWKS (issuer and audience required)',
  create(name, options) {
    const opts = parseOptions(JwtOptions, options, `auth provider '${name}' (jwt)`);
    const issuerBase = opts.issuer.replace(/\/+$/, '');
    const down = (why: unknown) =>
      unavailable(
        'SB_ERR_AUTH_IDP_UNAVAILABLE',
        `The identity provider ${opts.issuer} of auth backend '${name}' is unavailable: ${why instanceof Error ? why.message : String(why)}`,
        why,
      );

    // Discovery runs once, on first use, and again after a failure: the IdP may start after us.
    let keys: Promise<{ jwksUri: string; getKey: JWTVerifyGetKey }> | undefined;
    const resolveKeys = () => {
      keys ??= (async () => {
        let jwksUri = opts.jwks_uri;
        if (!jwksUri) {
          const doc = await fetchJson(`${issuerBase}/.well-known/openid-configuration`, opts.timeout_ms);
          if (doc.issuer !== opts.issuer)
            throw new Error(`discovery document names issuer '${String(doc.issuer)}', expected '${opts.issuer}'`);
          if (typeof doc.jwks_uri !== 'string') throw new Error('discovery document has no jwks_uri');
          jwksUri = doc.jwks_uri;
        }
        return { jwksUri, getKey: createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: opts.timeout_ms }) };
      })().catch((err) => {
        keys = undefined;
        throw err;
      });
      return keys;
    };

    return {
      name,
      type: 'jwt',
      kind: 'auth',
      capabilities: {},
      async authenticate(req) {
        const token = presentedCredential(req);
        // Not a compact JWS: no need to reach the IdP to refuse it.
        if (token?.split('.').length !== 3) return undefined;
        let getKey: JWTVerifyGetKey;
        try {
          getKey = (await resolveKeys()).getKey;
        } catch (err) {
          throw down(err);
        }
        try {
          const { payload } = await jwtVerify(token, getKey, {
            issuer: opts.issuer,
            audience: opts.audience,
            algorithms: opts.algorithms,
            clockTolerance: opts.clock_tolerance_seconds,
          });
          return principalFromClaims(payload, opts);
        } catch (err) {
          if (isTokenError(err)) return undefined;
          throw down(err);
        }
      },
      publicConfig: () => ({ enabled: true, type: 'jwt', issuer: opts.issuer, audience: opts.audience }),
      async healthcheck(): Promise<Health> {
        try {
          const { jwksUri } = await resolveKeys();
          await fetchJson(jwksUri, opts.timeout_ms);
          return 'ok';
        } catch {
          return 'down';
        }
      },
      close: async () => {},
    };
  },
};
