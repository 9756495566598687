import type { Principal } from '../../core/primitives/auth.ts';
import { ToolAccessDenied, type ToolCaller } from '../../core/primitives/tools.ts';
import type { RegistryLink, RequestHeaders } from '../../core/registry-link.ts';

/**
 * Which registry scopes a platform principal unknown to the registry gets:
 * keys are a principal id (`alice`, `noop` under noop auth) or `group:<name>`;
 * values are names of registry scope documents. Matches add up. There is no
 * wildcard key and no default: a principal that matches nothing gets nothing.
 */
export type PrincipalScopes = Record<string, string[]>;

export function mappedScopes(map: PrincipalScopes, p: Principal | undefined): string[] {
  if (!p) return [];
  const keys = [p.id, ...p.groups.map((g) => `group:${g}`)];
  return [...new Set(keys.flatMap((k) => map[k] ?? []))];
}

const bearerOf = (v: string | string[] | undefined) => {
  const raw = Array.isArray(v) ? v[0] : v;
  return raw && /^bearer /i.test(raw) ? raw.slice(7).trim() : undefined;
};

/** A remote registry that could not be reached (connection refused, reset, DNS): a 503 naming it, not a tool failure. */
export class RegistryUnreachable extends Error {}

/** The RegistryUnreachable somewhere in an error's cause chain (the MCP SDK and the pool wrap what fetch threw). */
export function unreachableIn(err: unknown): RegistryUnreachable | undefined {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof RegistryUnreachable) return e;
  return undefined;
}

/**
 * A link to a registry in another process: plain HTTP with the caller's own
 * registry token (X-Authorization), else the token the operator configured.
 */
export function remoteLink(url: string, token: string | undefined): RegistryLink {
  const base = url.replace(/\/+$/, '');
  return {
    baseUrl: base,
    fetch: async (u, init) => {
      try {
        return await fetch(u, init);
      } catch (err) {
        // An abort is the caller's timeout, not the registry being away.
        if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') throw err;
        throw new RegistryUnreachable(`The registry at ${base} cannot be reached: ${(err as Error).message}`, {
          cause: err,
        });
      }
    },
    callerToken: async (h: RequestHeaders) => bearerOf(h['x-authorization']),
    tokenFor: async () => {
      if (!token)
        throw new ToolAccessDenied(
          `The remote registry ${base} needs a token: send X-Authorization: Bearer <registry token>, or set the provider's 'token' option`,
        );
      return token;
    },
  };
}

/**
 * The registry token a call is made with. The caller's own registry token
 * first (its scopes apply as they are); otherwise the principal mapping
 * decides, and no match is a refusal, never a pass.
 */
export async function tokenFor(
  link: RegistryLink,
  map: PrincipalScopes,
  caller: ToolCaller | undefined,
  remote: boolean,
): Promise<string> {
  const own = caller ? await link.callerToken(caller.headers) : undefined;
  if (own) return own;
  if (remote) return link.tokenFor('', []);
  const scopes = mappedScopes(map, caller?.principal);
  if (scopes.length === 0) {
    const who = caller?.principal ? `principal '${caller.principal.id}'` : 'this caller';
    throw new ToolAccessDenied(
      `${who} has no registry scopes: send a registry token in X-Authorization, or have an administrator map the principal (or one of its groups as 'group:<name>') to scope names in the tools provider's 'principal_scopes' option`,
    );
  }
  return link.tokenFor(`platform:${caller!.principal!.id}`, scopes);
}
