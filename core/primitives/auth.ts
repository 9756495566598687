import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

/** Who is calling /api/v1, as resolved by the active auth backend. */
export const Principal = Type.Object({
  id: Type.String(),
  type: Type.Union([Type.Literal('user'), Type.Literal('service'), Type.Literal('anonymous')]),
  is_admin: Type.Boolean(),
  groups: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
});
export type Principal = Static<typeof Principal>;

export interface AuthRequest {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A platform auth backend (kind `auth`). `authenticate` returns the principal,
 * or undefined when the request carries no usable credential (the plugin
 * answers 401 with WWW-Authenticate). A backend that needs no I/O (noop, a
 * table of API keys) may answer synchronously: it runs on every /api/v1
 * request, and a promise per request is a measurable share of a fast route.
 */
export interface AuthBackend extends ProviderBase {
  readonly kind: 'auth';
  authenticate(req: AuthRequest): Promise<Principal | undefined> | Principal | undefined;
  /** What /auth/config publishes for UIs (never secrets). */
  publicConfig(): Record<string, unknown>;
}
