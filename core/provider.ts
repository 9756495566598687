import type { FastifyBaseLogger } from 'fastify';
import type { ProviderKind } from './primitives.ts';
import type { Store } from './store-types.ts';
import type { LateServices } from './registry-link.ts';

import type { Health } from './health.ts';

export type { Health };

/** Capabilities are plain data so the HTTP layer can refuse (501) before calling a provider. */
export type Capabilities = Record<string, boolean | string | readonly string[]>;

/** What every provider instance has, whatever its primitive. */
export interface ProviderBase {
  /** Instance name as configured (e.g. `durable`), used in X-Provider headers. */
  readonly name: string;
  /** Factory type (e.g. `keyv`). Equal to `name` when the instance was not renamed. */
  readonly type: string;
  readonly kind: ProviderKind;
  readonly capabilities: Capabilities;
  healthcheck(creds?: CallerCredentials): Promise<Health>;
  close(): Promise<void>;
}

/** Credentials a caller passed through headers (spec 5.5), resolved per request. */
export interface CallerCredentials {
  /** `X-Cred-{Service}-{Key}` headers, keyed `service` -> `key` -> value (lower-case). */
  service: Record<string, Record<string, string>>;
  cloud?: { accessKeyId?: string; secretAccessKey?: string; sessionToken?: string; region?: string };
}

/** Passed to every factory: shared services of the core, never a plugin. */
export interface ProviderContext {
  store: Store;
  logger: FastifyBaseLogger;
  dataDir: string;
  /** Look up another provider (e.g. an embeddings-capable llm for semantic memory). */
  lookup: (kind: ProviderKind, name?: string) => ProviderBase | undefined;
  /** Filled by surface plugins after providers are built: read at call time, never at creation. */
  services?: LateServices;
  /** The surfaces this process serves (`registry`, `platform`). */
  surfaces?: readonly string[];
}

/**
 * A typed factory. Third-party packages export these; no base class is needed.
 * `create` may be async so heavy SDKs can be imported lazily.
 */
export interface ProviderFactory<P extends ProviderBase = ProviderBase> {
  readonly type: string;
  readonly kind: ProviderKind;
  readonly description?: string;
  /** Created with empty options when the config does not list instances for its primitive. */
  readonly autoInstance?: boolean;
  /**
   * When the config names no default for the kind, an instance whose factory
   * says it is preferred (its engine is present) becomes the default over noop.
   */
  preferred?(options: Record<string, unknown>, ctx: ProviderContext): boolean;
  /**
   * For real engines found on the machine (a Chromium binary, bubblewrap): checked once at start for an
   * auto instance. False: no auto instance is made (a configured one still is, and reports `down`). True: the
   * auto instance replaces `noop` as the kind's default, so users get the real engine wherever it is present.
   */
  readonly enginePresent?: (ctx: ProviderContext) => boolean | Promise<boolean>;
  create(instanceName: string, options: Record<string, unknown>, ctx: ProviderContext): P | Promise<P>;
}

/** What a provider package's entry module exports (default export or named `providers`). */
export interface ProviderPackageModule {
  providers: ProviderFactory[];
}

export function defineProviders(providers: ProviderFactory[]): ProviderPackageModule {
  return { providers };
}
