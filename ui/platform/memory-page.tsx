import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';
import { ListState, ListTable, Pager } from '../components/list.tsx';
import { setQuery } from '../router.ts';
import { Empty, Json, enc, href, queryParam, when } from './bits.tsx';

interface MemoryRecord {
  namespace: string;
  key: string;
  content: string;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

const PAGE = 50;
const RECORD_COLUMNS = [
  { label: 'Key' },
  { label: 'Content' },
  { label: 'Updated' },
  { label: 'Details', hidden: true },
];
const RESULT_COLUMNS = [...RECORD_COLUMNS.slice(0, 2), { label: 'Score', num: true }, ...RECORD_COLUMNS.slice(2)];

function RecordRow({ r, score }: { r: MemoryRecord; score?: number }) {
  const [open, setOpen] = useState(false);
  const hasMeta = Object.keys(r.metadata ?? {}).length > 0;
  return (
    <>
      <tr>
        <td>
          <code>{r.key}</code>
        </td>
        <td class="pf-content-cell">{r.content}</td>
        {score === undefined ? null : <td class="pf-num">{score.toFixed(3)}</td>}
        <td>{when(r.updated_at)}</td>
        <td>
          {hasMeta ? (
            <button type="button" class="pf-link" aria-expanded={open} onClick={() => setOpen(!open)}>
              {open ? 'Hide' : 'Metadata'}
              <span class="sr-only"> of {r.key}</span>
            </button>
          ) : null}
        </td>
      </tr>
      {open ? (
        <tr class="pf-detail-row">
          <td colSpan={score === undefined ? 4 : 5}>
            <Json value={r.metadata} label={`Metadata of ${r.key}`} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** Namespaces, their records (newest first, paged) and a search over a namespace (lexical BM25, or fused). */
export function MemoryPage() {
  const ns = queryParam('ns');
  const q = queryParam('q') ?? '';
  const [offset, setOffset] = useState(0);
  const [draft, setDraft] = useState(q);
  const [nsFilter, setNsFilter] = useState('');
  const [namespaces, nsError] = useApi(() => api<{ namespaces: string[] }>('/api/v1/memory/namespaces'), []);
  const [records, recError] = useApi(
    () =>
      ns && !q
        ? api<{ records: MemoryRecord[]; total: number }>(`/api/v1/memory/${enc(ns)}`, {
            query: { limit: PAGE, offset },
          })
        : Promise.resolve(undefined),
    [ns, q, offset],
  );
  const [hits, searchError] = useApi(
    () =>
      ns && q
        ? api<{ results: Array<{ record: MemoryRecord; score: number }> }>(`/api/v1/memory/${enc(ns)}/search`, {
            method: 'POST',
            json: { query: q, top_k: 25 },
          })
        : Promise.resolve(undefined),
    [ns, q],
  );

  const search = (e: Event) => {
    e.preventDefault();
    setQuery({ q: draft.trim() || undefined });
  };

  const f = nsFilter.trim().toLowerCase();
  const shown = (namespaces?.namespaces ?? []).filter((n) => !f || n.toLowerCase().includes(f)).sort();

  return (
    <section class="pf-page">
      <PageHeader title="Memory" sub="Namespaces of the memory primitive, their records, and search." />
      <ErrorBox error={nsError} />
      <div class="pf-split pf-split-nav">
        <nav class="pf-panel" aria-label="Namespaces">
          <h2>Namespaces</h2>
          <label for="pf-ns-filter" class="sr-only">
            Filter namespaces
          </label>
          <input
            id="pf-ns-filter"
            type="search"
            placeholder="Filter namespaces"
            value={nsFilter}
            onInput={(e) => setNsFilter((e.target as HTMLInputElement).value)}
          />
          {!namespaces && !nsError ? <Loading what="namespaces" /> : null}
          {namespaces && shown.length === 0 ? <Empty>No namespaces{f ? ' match' : ' yet'}.</Empty> : null}
          <ul class="pf-nav-list">
            {shown.map((n) => (
              <li key={n}>
                <a
                  href={href('/platform/memory', { ns: n })}
                  aria-current={n === ns ? 'page' : undefined}
                  onClick={() => {
                    setOffset(0);
                    setDraft('');
                  }}
                >
                  {n}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div>
          {ns ? (
            <>
              <h2 class="pf-h2">
                <code>{ns}</code>
              </h2>
              <form class="pf-toolbar" onSubmit={search}>
                <label for="pf-memory-search" class="pf-inline-label">
                  Search
                </label>
                <input
                  id="pf-memory-search"
                  type="search"
                  placeholder={`Search ${ns}`}
                  value={draft}
                  onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
                />
                <button type="submit" class="btn primary">
                  Search
                </button>
                {q ? (
                  <button
                    type="button"
                    class="btn"
                    onClick={() => {
                      setDraft('');
                      setQuery({ q: undefined });
                    }}
                  >
                    Clear
                  </button>
                ) : null}
              </form>
              <ErrorBox error={recError ?? searchError} />
              {q ? (
                <ListState
                  data={hits}
                  items={(h) => h.results}
                  error={searchError}
                  what="results"
                  empty={
                    <Empty>
                      Nothing in {ns} matches “{q}”.
                    </Empty>
                  }
                >
                  {(results) => (
                    <ListTable label={`Results for ${q}`} columns={RESULT_COLUMNS}>
                      {results.map((h) => (
                        <RecordRow r={h.record} score={h.score} key={h.record.key} />
                      ))}
                    </ListTable>
                  )}
                </ListState>
              ) : (
                <ListState
                  data={records}
                  items={(r) => r.records}
                  error={recError}
                  what="records"
                  empty={<Empty>No records in {ns}.</Empty>}
                >
                  {(rows, r) => (
                    <>
                      <ListTable label={`Records of ${ns}`} columns={RECORD_COLUMNS}>
                        {rows.map((row) => (
                          <RecordRow r={row} key={row.key} />
                        ))}
                      </ListTable>
                      <Pager offset={offset} shown={rows.length} total={r.total} page={PAGE} onPage={setOffset} />
                    </>
                  )}
                </ListState>
              )}
            </>
          ) : (
            <Empty>Choose a namespace to browse its records.</Empty>
          )}
        </div>
      </div>
    </section>
  );
}
