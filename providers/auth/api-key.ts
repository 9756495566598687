import { createHash } from 'node:crypto';
import type { AuthBackend, Principal } from '../../core/primitives/auth.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { presentedCredential } from './credentials.ts';
import { ApiKeyOptions, parseOptions } from './options.ts';

// Keys are looked up by their SHA-256 so the map holds no plaintext secret and
// the lookup cost does not depend on how many leading characters match.
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * Static API keys from the provider options:
 * `providers.auth.instances.<name> = {type: api_key, options: {keys: [{key, principal_id, groups, scopes, admin}]}}`.
 * Presented as `Authorization: Bearer <key>` or `X-Api-Key: <key>`.
 */
export const apiKeyAuth: ProviderFactory<AuthBackend> = {
  type: 'api_key',
  kind: 'auth',
  description: 'Static API keys from the config (Authorization: Bearer or X-Api-Key)',
  create(name, options) {
    const opts = parseOptions(ApiKeyOptions, options, `auth provider '${name}' (api_key)`);
    const byDigest = new Map<string, Principal>();
    for (const [i, k] of opts.keys.entries()) {
      const d = digest(k.key);
      if (byDigest.has(d))
        throw new Error(`auth provider '${name}' (api_key) option 'keys.${i}.key': the same key is listed twice`);
      byDigest.set(d, {
        id: k.principal_id,
        type: k.type,
        is_admin: k.admin,
        groups: [...k.groups],
        scopes: [...k.scopes],
      });
    }
    return {
      name,
      type: 'api_key',
      kind: 'auth',
      capabilities: {},
      authenticate(req) {
        const cred = presentedCredential(req);
        const p = cred === undefined ? undefined : byDigest.get(digest(cred));
        // A copy, so a route that edits request.principal cannot change the configured key.
        return p && { ...p, groups: [...p.groups], scopes: [...p.scopes] };
      },
      publicConfig: () => ({
        enabled: true,
        type: 'api_key',
        headers: ['Authorization: Bearer <key>', 'X-Api-Key: <key>'],
      }),
      healthcheck: async () => 'ok',
      close: async () => {},
    };
  },
};
