import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi, Tags } from '../components/common.tsx';
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
      {!data && !error ? <Loading what="traces" /> : null}
      {data && data.traces.length === 0 ? (
        <Empty>No traces{name || session ? ' match the filter' : ' yet'}.</Empty>
      ) : null}
      {data && data.traces.length > 0 ? (
        <>
          <table class="pf-table">
            <caption class="sr-only">Traces</caption>
            <thead>
              <tr>
                <th scope="col">Trace</th>
                <th scope="col">User</th>
                <th scope="col">Session</th>
                <th scope="col">Tags</th>
                <th scope="col" class="pf-num">
                  Spans
                </th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {data.traces.map((t) => (
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
            </tbody>
          </table>
          <div class="pf-pager">
            <button
              type="button"
              class="btn"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - PAGE))}
            >
              Previous
            </button>
            <span class="muted">
              {offset + 1}–{offset + data.traces.length} of {data.total}
            </span>
            <button
              type="button"
              class="btn"
              disabled={offset + PAGE >= data.total}
              onClick={() => setOffset(offset + PAGE)}
            >
              Next
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
