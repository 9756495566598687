import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { CopyButton, ErrorBox, Loading, PageHeader, Shield, Tags, useApi } from '../components/common.tsx';
import { href } from '../router.ts';
import { can, me } from '../session.ts';
import { HealthBadge, health, healthClass, startHealthFeed } from './health-feed.tsx';
import { type ServerDetail, bare } from './types.ts';

/** What an MCP client needs to reach this server through the gateway (streamable HTTP at /<path>/mcp). */
function clientConfig(s: ServerDetail): string {
  const name = bare(s.path).replace(/[^A-Za-z0-9_-]/g, '-');
  const url = `${window.location.origin}/${bare(s.path)}/mcp`;
  return JSON.stringify(
    {
      mcpServers: { [name]: { type: 'http', url, headers: { Authorization: 'Bearer <token from the Tokens page>' } } },
    },
    null,
    2,
  );
}

function Ratings(props: { path: string }) {
  const [r, error, reload] = useApi(
    () =>
      api<{ average_rating?: number; num_stars?: number; num_ratings?: number; rating_details?: unknown[] }>(
        `/api/servers/${encodeURIComponent(bare(props.path))}/rating`,
      ),
    [props.path],
  );
  const [err, setErr] = useState<unknown>(undefined);
  const rate = async (n: number) => {
    try {
      await api(`/api/servers/${encodeURIComponent(bare(props.path))}/rating`, { json: { rating: n } });
      reload();
    } catch (e) {
      setErr(e);
    }
  };
  const avg = r?.average_rating ?? r?.num_stars ?? 0;
  return (
    <div>
      <ErrorBox error={error ?? err} />
      <p>
        Average <strong>{avg.toFixed(1)}</strong> / 5
        {r?.rating_details ? ` from ${r.rating_details.length} rating(s)` : ''}
      </p>
      <fieldset class="row plain">
        <legend class="sr-only">Rate this server</legend>
        {[1, 2, 3, 4, 5].map((n) => (
          <button type="button" class="btn" key={n} onClick={() => rate(n)} aria-label={`Rate ${n} of 5`}>
            {'★'.repeat(n)}
          </button>
        ))}
      </fieldset>
    </div>
  );
}

interface ScanReport {
  status?: string;
  is_safe?: boolean;
  scan_timestamp?: string;
  analyzers_used?: string[];
  critical_issues?: number;
  high_severity?: number;
  medium_severity?: number;
  low_severity?: number;
  errors?: string[];
  tool_results?: Array<{ tool_name: string; is_safe: boolean }>;
}

/** The latest stored scan (GET .../security-scan; 404 until one ran) and, for admins, a rescan. */
function ScanResult(props: { path: string; pending: boolean }) {
  const url = `/api/servers/${encodeURIComponent(bare(props.path))}`;
  const [r, error, reload] = useApi(
    () =>
      api<ScanReport>(`${url}/security-scan`).catch((e) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }),
    [props.path],
  );
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(undefined);
  const rescan = async () => {
    setBusy(true);
    setErr(undefined);
    try {
      await api(`${url}/rescan`, { method: 'POST' });
      reload();
    } catch (e) {
      setErr(e);
    } finally {
      setBusy(false);
    }
  };
  const unsafeTools = (r?.tool_results ?? []).filter((t) => !t.is_safe).map((t) => t.tool_name);
  return (
    <div>
      {props.pending && (
        <p>
          <Shield label="Security scan pending" /> Held back: <strong>security-pending</strong>. An admin must review
          the findings before it is enabled.
        </p>
      )}
      <ErrorBox error={error ?? err} />
      {r === null && <p class="muted">Not scanned yet.</p>}
      {r && (
        <dl class="facts">
          <dt>Result</dt>
          <dd>
            <span class={`badge ${r.is_safe ? 'healthy' : 'unhealthy'}`}>
              {r.status ?? (r.is_safe ? 'SAFE' : 'UNSAFE')}
            </span>
          </dd>
          <dt>Findings</dt>
          <dd>
            {r.critical_issues ?? 0} critical, {r.high_severity ?? 0} high, {r.medium_severity ?? 0} medium,{' '}
            {r.low_severity ?? 0} low
          </dd>
          {unsafeTools.length > 0 && (
            <>
              <dt>Unsafe tools</dt>
              <dd class="mono">{unsafeTools.join(', ')}</dd>
            </>
          )}
          <dt>Analyzers</dt>
          <dd>{(r.analyzers_used ?? []).join(', ') || '—'}</dd>
          <dt>Scanned</dt>
          <dd>{r.scan_timestamp ?? '—'}</dd>
          {r.errors && (
            <>
              <dt>Errors</dt>
              <dd>{r.errors.join('; ')}</dd>
            </>
          )}
        </dl>
      )}
      {me.value?.is_admin && (
        <p>
          <button type="button" class="btn" onClick={rescan} disabled={busy}>
            {busy ? 'Scanning…' : 'Rescan now'}
          </button>
        </p>
      )}
    </div>
  );
}

interface HealthSample {
  status: string;
  checked_at: string;
  latency_ms?: number;
  detail?: string;
}

/**
 * The server's recent health results as the registry keeps them (GET .../health/history: changes, plus one
 * sample a minute, the last 50), loaded again whenever the live feed reports a new check of this server.
 */
function HealthHistory(props: { path: string; lastChecked: string | null | undefined }) {
  const [r, error] = useApi(
    () =>
      api<{ samples: HealthSample[]; limit: number; sample_every_seconds: number }>(
        `/api/servers/${encodeURIComponent(bare(props.path))}/health/history`,
      ),
    [props.path, props.lastChecked],
  );
  if (error) return <ErrorBox error={error} />;
  if (!r) return <Loading what="health history" />;
  if (r.samples.length === 0) return <p class="muted">No health results recorded yet.</p>;
  const healthy = r.samples.filter((x) => x.status === 'healthy').length;
  return (
    <div data-health-history>
      <p class="muted">
        {healthy} of the last {r.samples.length} recorded results healthy (a result is kept when the status changes,
        otherwise once every {r.sample_every_seconds} s; the last {r.limit} are kept).
      </p>
      <ol class="history" aria-label="Health history, newest first">
        {r.samples.map((h) => (
          <li key={h.checked_at + h.status} data-sample={healthClass(h.status)}>
            <span class="mono">{h.checked_at}</span> <HealthBadge status={h.status} />
            {h.latency_ms !== undefined && <span class="muted"> {h.latency_ms} ms</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function ServerDetailPage(props: { path: string }) {
  const [s, error] = useApi(() => api<ServerDetail>(`/api/servers/${encodeURIComponent(props.path)}`), [props.path]);
  useEffect(() => startHealthFeed(), []);
  if (error) return <ErrorBox error={error} />;
  if (!s) return <Loading what="server" />;
  const live = health.value[s.path];
  const status = live?.status ?? s.health_status;
  return (
    <section>
      <PageHeader
        title={s.server_name || s.name}
        sub={
          <>
            <span class="mono">{s.path}</span> · <HealthBadge status={status} /> ·{' '}
            {s.is_enabled ? 'enabled' : 'disabled'}
          </>
        }
      >
        {can('modify_service', s.path) && (
          <a class="btn" href={href(`/edit/${bare(s.path)}`)}>
            Edit
          </a>
        )}
      </PageHeader>
      <p>{s.description}</p>
      <div class="grid-2">
        <div class="card">
          <h2>Details</h2>
          <dl class="facts">
            <dt>Tags</dt>
            <dd>
              <Tags tags={s.tags} />
            </dd>
            <dt>Version</dt>
            <dd>{s.version ?? '—'}</dd>
            <dt>Transports</dt>
            <dd>{s.supported_transports.join(', ') || '—'}</dd>
            {s.proxy_pass_url && (
              <>
                <dt>Backend</dt>
                <dd class="mono">{s.proxy_pass_url}</dd>
              </>
            )}
            <dt>Credential</dt>
            <dd>
              {s.auth_scheme === 'none'
                ? 'none'
                : `${s.auth_scheme}${s.auth_credential_encrypted ? ' (stored encrypted)' : ''}`}
            </dd>
            <dt>License</dt>
            <dd>{s.license || '—'}</dd>
            <dt>Groups</dt>
            <dd>{s.groups.join(', ') || '—'}</dd>
            <dt>Registered</dt>
            <dd>
              {s.registered_at} by {s.registered_by}
            </dd>
          </dl>
        </div>
        <div class="card">
          <h2>Security scan</h2>
          <ScanResult path={s.path} pending={s.tags.includes('security-pending')} />
          <h2>Health</h2>
          <p>
            <HealthBadge status={status} /> last checked {live?.last_checked_iso ?? s.last_checked_iso ?? 'never'}
          </p>
          <h3>Health history</h3>
          <HealthHistory path={s.path} lastChecked={live?.last_checked_iso ?? s.last_checked_iso} />
          <h2>Ratings</h2>
          <Ratings path={s.path} />
        </div>
      </div>
      <div class="card">
        <div class="page-header">
          <h2>Connect an MCP client</h2>
          <CopyButton text={clientConfig(s)} label="Copy MCP client config" />
        </div>
        <pre>{clientConfig(s)}</pre>
      </div>
      <h2>Tools ({s.tools.length})</h2>
      {s.tools.length === 0 && <p class="muted">No tools discovered yet.</p>}
      {s.tools.map((t) => (
        <details class="card tool" key={t.name}>
          <summary>
            <strong class="mono">{t.name}</strong> <span class="muted">{t.description}</span>
          </summary>
          <pre>{JSON.stringify(t.inputSchema ?? {}, null, 2)}</pre>
        </details>
      ))}
      <h2>Versions</h2>
      {s.versions.length === 0 ? (
        <p class="muted">One version.</p>
      ) : (
        <div class="table-wrap">
          <table aria-label="Versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Status</th>
                <th scope="col">Registered</th>
                <th scope="col">Latest</th>
              </tr>
            </thead>
            <tbody>
              {s.versions.map((v) => (
                <tr key={v.version}>
                  <td class="mono">{v.version}</td>
                  <td>{v.status}</td>
                  <td>{v.registered_at}</td>
                  <td>{v.is_latest ? 'yes' : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
