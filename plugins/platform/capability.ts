import { notImplemented } from '../../core/errors.ts';
import type { ProviderBase } from '../../core/provider.ts';

/**
 * Refuse with 501 before calling a provider that lacks a capability. `accept`
 * lists the capability values that are enough (e.g. any search mode but 'none').
 */
export function requireCapability(
  provider: ProviderBase,
  capability: string,
  what: string,
  accept?: (value: unknown) => boolean,
): void {
  const value = provider.capabilities[capability];
  const ok = accept ? accept(value) : value === true;
  if (!ok) {
    // A provider may say how to get the capability (e.g. noop browser: install Chromium).
    const hint =
      typeof provider.capabilities.missing_hint === 'string' ? `. ${provider.capabilities.missing_hint}` : '';
    throw notImplemented(
      'SB_ERR_CAPABILITY_MISSING',
      `The ${provider.kind.replace(/_/g, ' ')} provider '${provider.name}' does not support ${what} (capability '${capability}'); choose another provider with X-Provider-${provider.kind.replace(/(^|_)([a-z])/g, (_m, d: string, c: string) => (d ? '-' : '') + c.toUpperCase())}${hint}`,
    );
  }
}

/** 501 for an optional provider method the provider does not implement. */
export function requireMethod<T extends object, K extends keyof T>(
  provider: T & ProviderBase,
  method: K,
  what: string,
): NonNullable<T[K]> {
  const fn = provider[method];
  if (typeof fn !== 'function') {
    throw notImplemented(
      'SB_ERR_CAPABILITY_MISSING',
      `The ${provider.kind.replace(/_/g, ' ')} provider '${provider.name}' does not support ${what}`,
    );
  }
  return (fn as (...a: unknown[]) => unknown).bind(provider) as NonNullable<T[K]>;
}
