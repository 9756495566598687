import { isDeepFrozen } from '../../core/deep-frozen.ts';

type Serializer = (data: unknown) => string;

/** Larger bodies are written afresh each time: the memo should never hold much more than the values themselves. */
export const MEMO_MAX_CHARS = 16 * 1024;

/**
 * A route's response serialiser that writes a deep-frozen value once. The
 * `in_memory` memory provider hands every reader the same frozen record
 * (core/store-memory.ts), so a record read again and again was serialised again
 * and again: in the routed retrieve that was the largest piece of work left
 * after the socket write. A frozen value cannot change, so its text cannot
 * either. The memo is keyed weakly by the value: an overwritten or deleted record
 * takes its text with it, and a new record is a new key. Values that are not
 * known to be deep-frozen (`Object.isFrozen` only looks at the top level) are
 * serialised every time, as before.
 */
export function memoizeFrozen(serialize: Serializer): Serializer {
  const memo = new WeakMap<object, string>();
  return (data) => {
    if (!isDeepFrozen(data)) return serialize(data);
    let text = memo.get(data as object);
    if (text === undefined) {
      text = serialize(data);
      if (text.length <= MEMO_MAX_CHARS) memo.set(data as object, text);
    }
    return text;
  };
}
