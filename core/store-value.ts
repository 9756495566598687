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

/** increment() on an entry that is not an integer counter: the caller used the key for something else. */
export class NotACounter extends Error {
  constructor(key: string) {
    super(`Entry '${key}' does not hold an integer counter; increment() cannot add to it`);
    this.name = 'NotACounter';
  }
}

/**
 * The counter in a stored keyv entry (`{"value":n}`, keyv's envelope); 0 when
 * the entry has expired. Shared by the backends that read and write the
 * envelope themselves inside one atomic step (SQLite).
 */
export function counterIn(key: string, serialized: string): number {
  let entry: { value?: unknown; expires?: unknown } | null;
  try {
    entry = JSON.parse(serialized) as typeof entry;
  } catch {
    throw new NotACounter(key);
  }
  if (typeof entry !== 'object' || entry === null) throw new NotACounter(key);
  if (typeof entry.expires === 'number' && entry.expires <= Date.now()) return 0;
  if (!Number.isSafeInteger(entry.value)) throw new NotACounter(key);
  return entry.value as number;
}
