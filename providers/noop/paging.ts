import { badRequest } from '../../core/errors.ts';

/**
 * Offset paging behind an opaque `next_token` (base64url of the offset), for
 * the in-memory lists of the noop providers. A token that does not decode is
 * the caller's mistake: 400 naming it.
 */
export function pageOf<T>(
  items: readonly T[],
  maxResults: number,
  nextToken: string | undefined,
  code: string,
): { items: T[]; next_token: string | null } {
  let offset = 0;
  if (nextToken !== undefined) {
    const text = Buffer.from(nextToken, 'base64url').toString('utf8');
    const decoded = Number(text);
    // base64url decoding skips characters it does not know, so the text must be digits only.
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(decoded))
      throw badRequest(
        code,
        `next_token '${nextToken}' is not a token from a previous page; omit it to start at the first page`,
      );
    offset = decoded;
  }
  const end = offset + maxResults;
  return {
    items: items.slice(offset, end),
    next_token: end < items.length ? Buffer.from(String(end), 'utf8').toString('base64url') : null,
  };
}
