import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, PageHeader, useApi, Tags } from '../components/common.tsx';
import { ListState, ListTable, Pager } from '../components/list.tsx';
import { setQuery } from '../router.ts';
import { Empty, enc, href, queryParam, when } from './bits.tsx';

export interface TraceSummary {
  trace_id: string;
  name: string;
  user_id: string | null;
  session_id: string | null;
  tags: string[];
  spans: unknown[];
  timestamp: string;
}

const PAGE = 50;
const COLUMNS = [
  { label: 'Trace' },
  { label: 'User' },
  { label: 'Session' },
  { label: 'Tags' },
  { label: 'Spans', num: true },
  { label: 'Time' },
];

/** Traces of the observability primitive, newest first (the caller's own unless an admin), filtered by name or session. */
export function TracesPage() {
  const name = queryParam('name') ?? '';
  const session = queryParam('session') ?? '';
  const [offset, setOffset] = useState(0);
  const [draftName, setDraftName] = useState(name);
  const [draftSession, setDraftSession] = useState(session);
  const [data, error] = useApi(
    () =>
      api<{ traces: TraceSummary[]; total: number }>('/api/v1/observability/traces', {
        query: { limit: PAGE, offset, name: name || undefined, session_id: session || undefined },
      }),
    [name, session, offset],
  );

  return (
    <section class="pf-page">
      <PageHeader
        title="Traces"
        sub="Runs recorded by the observability primitive: open one for its spans and generations."
      />
      <form
        class="pf-toolbar"
        aria-label="Filter traces"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setQuery({ name: draftName.trim() || undefined, session: draftSession.trim() || undefined });
        }}
      >
        <label for="pf-trace-name" class="pf-inline-label">
          Name
        </label>
        <input
          id="pf-trace-name"
          value={draftName}
          placeholder="e.g. agent:helper"
          onInput={(e) => setDraftName((e.target as HTMLInputElement).value)}
        />
        <label for="pf-trace-session" class="pf-inline-label">
          Session
        </label>
        <input
          id="pf-trace-session"
          value={draftSession}
          onInput={(e) => setDraftSession((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="btn primary">
          Filter
        </button>
      </form>
      <ErrorBox error={error} />
      <ListState
        data={data}
        items={(d) => d.traces}
        error={error}
        what="traces"
        empty={<Empty>No traces{name || session ? ' match the filter' : ' yet'}.</Empty>}
      >
        {(traces, d) => (
          <>
            <ListTable caption="Traces" columns={COLUMNS}>
              {traces.map((t) => (
                <tr key={t.trace_id}>
                  <td>
                    <a href={href(`/platform/traces/${enc(t.trace_id)}`)} class="pf-strong">
                      {t.name || t.trace_id}
                    </a>
                    <div class="muted pf-small">
                      <code>{t.trace_id}</code>
                    </div>
                  </td>
                  <td>{t.user_id ?? '—'}</td>
                  <td>{t.session_id ? <code>{t.session_id}</code> : '—'}</td>
                  <td>
                    <Tags tags={t.tags} />
                  </td>
                  <td class="pf-num">{t.spans.length}</td>
                  <td>{when(t.timestamp)}</td>
                </tr>
              ))}
            </ListTable>
            <Pager offset={offset} shown={traces.length} total={d.total} page={PAGE} onPage={setOffset} />
          </>
        )}
      </ListState>
    </section>
  );
}
