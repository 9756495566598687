import type { FastifyInstance } from 'fastify';
import type { Fernet } from '../../../core/crypto/fernet.ts';
import type { UserContext } from '../auth/context.ts';
import type { AgentRepository } from './agents-repo.ts';
import type { CatalogConfig } from './config.ts';
import type { CredentialAuditLog } from './credentials.ts';
import type { Ratings } from './ratings.ts';
import type { ScanHook } from './scan.ts';
import type { ServerRepository } from './servers.ts';
import type { BackendGuard } from '../health/guard.ts';
import type { SkillRepository } from './skills-repo.ts';
import { isAdmin } from './access.ts';

/**
 * What the catalog shares with the other registry plugins (health checks,
 * gateway, scanning): `app.catalog`. Replace `scanner` to plug in scanning.
 */
export interface Catalog {
  config: CatalogConfig;
  fernet: Fernet;
  servers: ServerRepository;
  agents: AgentRepository;
  skills: SkillRepository;
  ratings: Ratings;
  audit: CredentialAuditLog;
  scanner: ScanHook;
  /** Refuses link-local and metadata backends at registration (the same guard health and the gateway use). */
  guard: BackendGuard;
}

declare module 'fastify' {
  interface FastifyInstance {
    catalog: Catalog;
  }
}

const byContext = new WeakMap<object, Catalog>();

/**
 * The catalog of an app from anywhere (tests, the root scope): `app.catalog`
 * is only decorated inside the registry plugin's scope.
 */
export function catalogOf(app: FastifyInstance): Catalog {
  const c = byContext.get(app.sb);
  if (!c) throw new Error('the registry catalog is not registered on this app');
  return c;
}

export function rememberCatalog(app: FastifyInstance, catalog: Catalog): void {
  byContext.set(app.sb, catalog);
}

/** Backend URLs are for admins in gateway mode (clients go through the gateway) and for everyone in registry-only mode. */
export function showBackend(catalog: Catalog, user: UserContext | undefined): boolean {
  return catalog.config.registryOnly || isAdmin(user);
}
