import { keyvNamespace } from '../../core/store.ts';
import { decodeCursor, encodeCursor, type Page, type Window } from './list.ts';
import type { OwnStore } from './sqlite-writer.ts';

/** A filter on a record's JSON: a field equal to a value, or an array field holding it. */
export type Match = { path: string; equals: string } | { path: string; holds: string };

type Param = string | number | null;

/**
 * list.ts's listOf in SQL, for the own SQLite file (sqlite-writer.ts): the same
 * filters, time window, order (newest first by time, then seq) and paging by
 * offset or cursor, but matched and sorted by SQLite on the writer thread, and
 * only the page's records parsed. A scan in JavaScript parsed every record of
 * the collection on the request thread, ~1 s per list at 100,000 traces.
 *
 * A record is keyv's envelope {"value":{"j": record JSON, "t", "seq"}}, so a
 * field of the record is json_extract over the JSON text `j`.
 */
export async function sqlListOf<T>(
  own: OwnStore,
  collection: string,
  matches: Array<Match | undefined>,
  w: Window,
): Promise<Page<T>> {
  const cursor = w.cursor === undefined ? undefined : decodeCursor(w.cursor);
  const ns = keyvNamespace(collection);
  const params: Param[] = [`${ns}:`, `${ns};`];
  const where: string[] = [];
  if (w.from !== undefined) {
    where.push('t >= ?');
    params.push(w.from);
  }
  if (w.to !== undefined) {
    where.push('t < ?');
    params.push(w.to);
  }
  for (const m of matches) {
    if (!m) continue;
    if ('equals' in m) {
      where.push('json_extract(j, ?) = ?');
      params.push(m.path, m.equals);
    } else {
      where.push('EXISTS (SELECT 1 FROM json_each(j, ?) WHERE json_each.value = ?)');
      params.push(m.path, m.holds);
    }
  }
  const rows = `WITH r AS (SELECT json_extract(value, '$.value.j') AS j, json_extract(value, '$.value.t') AS t,
      json_extract(value, '$.value.seq') AS seq FROM keyv WHERE key >= ? AND key < ?)
    SELECT {cols} FROM r${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  const [{ n: total }] = await own.query<{ n: number }>(rows.replace('{cols}', 'count(*) AS n'), params);
  const pageParams = [...params];
  let pageSql = rows.replace('{cols}', 'j, t, seq');
  if (cursor) {
    // Older than the cursor's record: earlier time, or the same time and a smaller seq.
    pageSql += `${where.length ? ' AND' : ' WHERE'} (t < ? OR (t = ? AND seq < ?))`;
    pageParams.push(cursor[0], cursor[0], cursor[1]);
  }
  // One row past the page says whether there is a next one.
  pageSql += ' ORDER BY t DESC, seq DESC LIMIT ? OFFSET ?';
  pageParams.push(w.limit + 1, cursor ? 0 : w.offset);
  const got = await own.query<{ j: string; t: string; seq: string }>(pageSql, pageParams);
  const page = got.slice(0, w.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => JSON.parse(r.j) as T),
    total: total ?? 0,
    next_cursor: got.length > w.limit && last ? encodeCursor([last.t, last.seq]) : null,
  };
}

/** `field = value` when the query names a value. */
export const eq = (path: string, value: string | undefined): Match | undefined =>
  value === undefined ? undefined : { path, equals: value };

/** `array field holds value` when the query names a value. */
export const holds = (path: string, value: string | undefined): Match | undefined =>
  value === undefined ? undefined : { path, holds: value };

/** The field a path ('$.a.b') names in a record. */
function fieldOf(record: unknown, path: string): unknown {
  let v = record;
  for (const k of path.slice(2).split('.')) v = (v as Record<string, unknown> | null | undefined)?.[k];
  return v;
}

/** The same matches, on a record in hand (the scan in JavaScript, for stores other than the own file). */
export function matchesAll(record: unknown, matches: Array<Match | undefined>): boolean {
  return matches.every((m) => {
    if (!m) return true;
    const v = fieldOf(record, m.path);
    return 'equals' in m ? v === m.equals : Array.isArray(v) && v.includes(m.holds);
  });
}
