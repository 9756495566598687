import type { ComponentChildren } from 'preact';
import { Loading } from './common.tsx';

/**
 * The scaffolding of the console's list pages (memory, traces, sessions, chat's agent choice): a list's
 * loading / empty / filled states, its table, its pager and a select that filters it. The pages keep what
 * differs: their rows, their filters' meaning and their words.
 */

/**
 * A list's states: loading until `data` or an error arrives (the error is shown by the page's ErrorBox), then
 * the `empty` content when `items` picks none from it, else what `children` makes of the items and the data.
 */
export function ListState<D, T>(props: {
  data: D | undefined;
  items: (data: D) => T[];
  error: unknown;
  what: string;
  empty: ComponentChildren;
  children: (items: T[], data: D) => ComponentChildren;
}) {
  if (props.data === undefined) return props.error ? null : <Loading what={props.what} />;
  const items = props.items(props.data);
  return <>{items.length ? props.children(items, props.data) : props.empty}</>;
}

/** A header cell: `num` right-aligns a count, `hidden` names the column for screen readers only. */
export interface Column {
  label: string;
  num?: boolean;
  hidden?: boolean;
}

/** A list table: named by a caption (read by screen readers only) or an aria-label, rows as children. */
export function ListTable(props: {
  columns: Column[];
  caption?: ComponentChildren;
  label?: string;
  children: ComponentChildren;
}) {
  return (
    <table class="pf-table" aria-label={props.label}>
      {props.caption === undefined ? null : <caption class="sr-only">{props.caption}</caption>}
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th scope="col" class={c.num ? 'pf-num' : undefined} key={c.label}>
              {c.hidden ? <span class="sr-only">{c.label}</span> : c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

/** Previous / "first–last of total" / Next over a list fetched `page` items at a time from `offset`. */
export function Pager(props: {
  offset: number;
  shown: number;
  total: number;
  page: number;
  onPage: (offset: number) => void;
}) {
  const { offset, shown, total, page, onPage } = props;
  return (
    <div class="pf-pager">
      <button type="button" class="btn" disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - page))}>
        Previous
      </button>
      <span class="muted">
        {offset + 1}–{offset + shown} of {total}
      </span>
      <button type="button" class="btn" disabled={offset + page >= total} onClick={() => onPage(offset + page)}>
        Next
      </button>
    </div>
  );
}

/** A labelled select choosing one of `options` (or none: the empty `placeholder` option), for a list's toolbar. */
export function SelectFilter(props: {
  id: string;
  label: string;
  value: string;
  placeholder: string;
  options: string[];
  onChange: (value: string) => void;
}) {
  return (
    <>
      <label class="pf-inline-label" for={props.id}>
        {props.label}
      </label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        <option value="">{props.placeholder}</option>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </>
  );
}
