import { notImplemented } from '../../core/errors.ts';

/**
 * What a noop method behind a `false` capability does if it is called anyway
 * (the HTTP layer refuses first; an agent loop calling the provider directly
 * still gets a clear 501 rather than a fake result).
 */
export function unsupported(primitive: string, name: string, what: string): never {
  throw notImplemented(
    'SB_ERR_CAPABILITY_MISSING',
    `The ${primitive} provider '${name}' (type noop) does not support ${what}; configure a real ${primitive} provider and select it with X-Provider-${primitive.replace(/(^|_)([a-z])/g, (_m, d: string, c: string) => (d ? '-' : '') + c.toUpperCase())}`,
  );
}
