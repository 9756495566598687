import { badRequest } from '../../core/errors.ts';

/**
 * Offset paging behind an opaque `next_token` (base64url of the offset), for
 * the in-memory lists of the noop providers. A token that does not decode is
 * the caller's mistake: 400 naming it.
 */
export function pageOf<T>(items: readonly T[], maxResults: number, nextToken: string | undefined, code: string): { items: T[]; next_token: string | null } {
  let offset = 0;
  if (nextToken !== undefined) {
    const decoded = Number(Buffer.from(nextToken, 'base64url').toString('utf8'));
    if (!Number.isInteger(decoded) || decoded < 0) throw badRequest(code, `next_token '${nextToken}' is not a token from a previous page; omit it to start at the first page`);
    offset = decoded;
  }
  const end = offset + maxResults;
  return { items: items.slice(offset, end), next_token: end < items.length ? Buffer.from(String(end), 'utf8').toString('base64url') : null };
}
