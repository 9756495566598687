import { unprocessable } from './errors.ts';

/**
 * A value whose JSON form could not be made: nested deeper than the serialiser's
 * stack (keyv's serialiser recurses per level), or holding a cycle or a BigInt.
 * That is about the value, not the store, so it must not become the 503 that
 * says the store is down while /readyz says it is fine.
 */
export class UnstorableValue extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'UnstorableValue';
  }
}

/**
 * The error a caller sees. A stack overflow comes from input too deeply nested
 * (the body parsers refuse such JSON; this catches what gets past them), so it is
 * a 422; anything else is a bug in what the service tried to store: a plain
 * error, which the error handler turns into a 500.
 */
export function unstorableError(storeName: string, err: UnstorableValue): Error {
  if (err.cause instanceof RangeError) {
    return unprocessable(
      'SB_ERR_VALUE_TOO_DEEP',
      `The value is nested too deeply for store '${storeName}' to write; send a flatter value`,
    );
  }
  return err;
}

/** Runs a serialiser, marking its failures as the value's, not the backend's. */
export function serialising<A, R>(serialise: (value: A) => R): (value: A) => R {
  return (value) => {
    try {
      return serialise(value);
    } catch (err) {
      throw new UnstorableValue(err);
    }
  };
}
