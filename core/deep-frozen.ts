/**
 * Values frozen all the way down, and known to be. `Object.isFrozen` answers
 * for the top level only, so a value counts here only when `deepFreeze` froze
 * it: code that may rely on a value never changing (the response serialiser's
 * memo, plugins/ops/serialize-memo.ts) asks `isDeepFrozen`.
 */
const marked = new WeakSet<object>();

// Walks into objects that are already frozen too: their top level says nothing about what is inside.
function freezeAll(value: unknown): void {
  if (value && typeof value === 'object' && !marked.has(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) freezeAll(v);
  }
}

/** Freezes a plain JSON value (objects, arrays, primitives; no cycles) and every value inside it; returns it. */
export function deepFreeze<T>(value: T): T {
  freezeAll(value);
  if (value && typeof value === 'object') marked.add(value);
  return value;
}

export function isDeepFrozen(value: unknown): boolean {
  return typeof value === 'object' && value !== null && marked.has(value);
}
