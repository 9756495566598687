/**
 * How a provider reaches the registry surface running in the same process,
 * without importing a plugin: the registry plugin fills `LateServices.registry`
 * when it registers (after providers are built), and providers read the slot
 * when they are called. Everything goes through the registry's own HTTP
 * routes, so its access checks, credential injection and audit apply exactly
 * as they do for an outside client.
 */
export type RequestHeaders = Record<string, string | string[] | undefined>;

export interface RegistryLink {
  /** The base URL `fetch` expects (a placeholder host: requests never leave the process). */
  readonly baseUrl: string;
  /** Dispatches into the registry's routes in-process. */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /**
   * The caller's own registry bearer token (X-Authorization, then Authorization)
   * when the registry accepts it; undefined when the caller is unknown to it.
   */
  callerToken(headers: RequestHeaders): Promise<string | undefined>;
  /** A short-lived registry token for `subject` holding exactly `scopes` (scope document names). */
  tokenFor(subject: string, scopes: string[]): Promise<string>;
  /**
   * Calls `fn` after every change this process makes to the server catalog (registration, edit, toggle,
   * deletion, a health result), so a provider's cached view can read its own process's writes at once.
   * In-process links only: a remote registry has no such feed, and views of it age out by their TTL.
   * Returns the unsubscribe function.
   */
  onServersChange?(fn: () => void): () => void;
}

/** Services that surface plugins offer providers once they are registered. */
export interface LateServices {
  registry?: RegistryLink;
}
