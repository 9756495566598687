import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi, Tags } from '../components/common.tsx';
import { Empty, Json, enc, href, when } from './bits.tsx';
import { type TimedItem, formatMs, layoutTimeline, tokensOf } from './timeline.ts';

interface Span extends TimedItem {
  span_id?: string;
  input?: unknown;
  output?: unknown;
  metadata?: Record<string, unknown>;
}

interface Trace {
  trace_id: string;
  name: string;
  user_id: string | null;
  session_id: string | null;
  input: unknown;
  output: unknown;
  tags: string[];
  spans: Span[];
  metadata: Record<string, unknown>;
  timestamp: string;
}

interface Generation extends TimedItem {
  generation_id: string;
  model: string | null;
  input: unknown;
  output: unknown;
  usage: Record<string, unknown>;
}

type Row = (Span & { kind: 'span' }) | (Generation & { kind: 'generation' });

/** One trace: its spans and generations on a timeline, token counts per generation, input and output. */
export function TracePage({ id }: { id: string }) {
  const [trace, error] = useApi(() => api<Trace>(`/api/v1/observability/traces/${enc(id)}`), [id]);
  // A provider without generations answers 501: the spans still show.
  const [gens, gensError] = useApi(
    () =>
      api<{ generations: Generation[] }>(`/api/v1/observability/traces/${enc(id)}/generations`, {
        query: { limit: 200 },
      }),
    [id],
  );

  if (error) return <ErrorBox error={error} />;
  if (!trace) return <Loading what="the trace" />;

  // A provider may list a trace's generation spans as generations too (the store provider derives them):
  // show such a turn once, as the generation, which carries the model and tokens.
  const listed = new Set((gens?.generations ?? []).map((g) => `${g.name}\u0000${g.start_time}`));
  const rows: Row[] = [
    ...trace.spans
      .filter((s) => !listed.has(`${s.name}\u0000${s.start_time}`))
      .map((s) => ({ ...s, kind: 'span' as const })),
    ...(gens?.generations ?? []).map((g) => ({ ...g, kind: 'generation' as const })),
  ];
  const { bars, totalMs } = layoutTimeline(rows);
  const totals = (gens?.generations ?? []).reduce(
    (acc, g) => {
      const t = tokensOf(g.usage);
      return { input: acc.input + (t.input ?? 0), output: acc.output + (t.output ?? 0) };
    },
    { input: 0, output: 0 },
  );

  return (
    <section class="pf-page">
      <PageHeader title={trace.name || 'Trace'} sub={<code>{trace.trace_id}</code>}>
        <a class="btn" href={href('/platform/traces')}>
          All traces
        </a>
      </PageHeader>
      <dl class="pf-facts">
        <div>
          <dt>User</dt>
          <dd>{trace.user_id ?? '—'}</dd>
        </div>
        <div>
          <dt>Session</dt>
          <dd>{trace.session_id ? <code>{trace.session_id}</code> : '—'}</dd>
        </div>
        <div>
          <dt>Recorded</dt>
          <dd>{when(trace.timestamp)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{formatMs(totalMs || undefined)}</dd>
        </div>
        <div>
          <dt>Tokens in / out</dt>
          <dd>
            {totals.input} / {totals.output}
          </dd>
        </div>
        <div>
          <dt>Tags</dt>
          <dd>{trace.tags.length ? <Tags tags={trace.tags} /> : '—'}</dd>
        </div>
      </dl>

      <h2 class="pf-h2">Timeline</h2>
      {rows.length === 0 ? <Empty>This trace has no spans or generations.</Empty> : null}
      {rows.length > 0 ? (
        <ol class="pf-timeline" aria-label="Spans and generations in time order">
          {bars.map((b, i) => {
            const r = b.item;
            const t = r.kind === 'generation' ? tokensOf(r.usage) : undefined;
            return (
              <li class={`pf-tl-row pf-tl-${r.kind}`} key={i}>
                <div class="pf-tl-label">
                  <span class={`pf-kind pf-kind-${r.kind}`}>{r.kind === 'generation' ? 'LLM' : 'span'}</span>
                  <span class="pf-tl-name">{r.name}</span>
                  {r.kind === 'generation' && r.model ? <code class="pf-small">{r.model}</code> : null}
                </div>
                <div class="pf-tl-track" aria-hidden="true">
                  {b.offset === undefined ? null : (
                    <div
                      class="pf-tl-bar"
                      // Set through the DOM style object (not an inline attribute), which a strict CSP allows.
                      style={{
                        left: `${(b.offset * 100).toFixed(2)}%`,
                        width: `${((b.width ?? 0) * 100).toFixed(2)}%`,
                      }}
                    />
                  )}
                </div>
                <div class="pf-tl-meta">
                  {formatMs(b.durationMs)}
                  {t?.total !== undefined ? (
                    <span class="pf-small muted">
                      {' '}
                      · {t.input ?? 0} in / {t.output ?? 0} out tokens
                    </span>
                  ) : null}
                </div>
              </li>
            );
          })}
        </ol>
      ) : null}

      <h2 class="pf-h2">Generations</h2>
      {gensError ? <ErrorBox error={gensError} /> : null}
      {gens && gens.generations.length === 0 ? <Empty>No generations recorded for this trace.</Empty> : null}
      {gens && gens.generations.length > 0 ? (
        <table class="pf-table">
          <caption class="sr-only">Generations</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Model</th>
              <th scope="col" class="pf-num">
                Input tokens
              </th>
              <th scope="col" class="pf-num">
                Output tokens
              </th>
              <th scope="col" class="pf-num">
                Total
              </th>
              <th scope="col">Output</th>
            </tr>
          </thead>
          <tbody>
            {gens.generations.map((g) => {
              const t = tokensOf(g.usage);
              return (
                <tr key={g.generation_id}>
                  <td>{g.name}</td>
                  <td>{g.model ? <code>{g.model}</code> : '—'}</td>
                  <td class="pf-num">{t.input ?? '—'}</td>
                  <td class="pf-num">{t.output ?? '—'}</td>
                  <td class="pf-num">{t.total ?? '—'}</td>
                  <td class="pf-content-cell">{typeof g.output === 'string' ? g.output : JSON.stringify(g.output)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}

      <div class="pf-grid-2">
        <div>
          <h2 class="pf-h2">Input</h2>
          <Json value={trace.input ?? null} label="Trace input" />
        </div>
        <div>
          <h2 class="pf-h2">Output</h2>
          <Json value={trace.output ?? null} label="Trace output" />
        </div>
      </div>
      {Object.keys(trace.metadata ?? {}).length ? (
        <>
          <h2 class="pf-h2">Metadata</h2>
          <Json value={trace.metadata} label="Trace metadata" />
        </>
      ) : null}
    </section>
  );
}
