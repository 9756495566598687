import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, Shield, Tags } from '../components/common.tsx';
import { href, location, setQuery } from '../router.ts';
import { can, me } from '../session.ts';
import { HealthBadge, feedState, health, healthClass, startHealthFeed } from './health-feed.tsx';
import { type ServerSummary, bare } from './types.ts';

const FIRST_ROWS = 60;

interface Ranked {
  paths: string[];
  /** How the order was made: 'hybrid', 'lexical-only' (semantic search) or 'text filter' (the list's query). */
  mode: string;
  /** Server path -> the tools that matched. */
  tools: Record<string, string[]>;
}

async function searchServers(query: string, signal: AbortSignal): Promise<Ranked> {
  try {
    const r = await api<{
      search_mode: string;
      servers: Array<{ path: string; matching_tools: Array<{ tool_name: string }> }>;
    }>('/api/search/semantic', {
      json: { query, entity_types: ['mcp_server'], max_results: 100, include_disabled: me.value?.is_admin ?? false },
      signal,
    });
    return {
      paths: r.servers.map((s) => s.path),
      mode: r.search_mode,
      tools: Object.fromEntries(r.servers.map((s) => [s.path, s.matching_tools.map((t) => t.tool_name)])),
    };
  } catch (err) {
    if (!(err instanceof ApiError) || ![404, 501, 503].includes(err.status)) throw err;
    const r = await api<{ servers: ServerSummary[] }>('/api/servers', { query: { query }, signal });
    return { paths: r.servers.map((s) => s.path), mode: 'text filter', tools: {} };
  }
}

/** Servers table: live health over the WebSocket, search (semantic, else the list's filter), filters, tags, enable toggle. */
export function ServersPage() {
  const q = location.value.query;
  const query = q.get('q') ?? '';
  const tag = q.get('tag') ?? '';
  const state = q.get('state') ?? '';
  const [servers, setServers] = useState<ServerSummary[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const [typed, setTyped] = useState(query);
  // The first screenful renders at once, the rest a frame later: with 1,000 servers the table is readable
  // well before every row is built (the bench's first meaningful paint).
  const [limit, setLimit] = useState(FIRST_ROWS);
  useEffect(() => {
    if (!servers || limit !== FIRST_ROWS) return;
    const id = requestAnimationFrame(() => setTimeout(() => setLimit(Number.POSITIVE_INFINITY), 0));
    return () => cancelAnimationFrame(id);
  }, [servers]);

  useEffect(() => startHealthFeed(), []);

  useEffect(() => {
    const ctl = new AbortController();
    api<{ servers: ServerSummary[] }>('/api/servers', { signal: ctl.signal }).then(
      (r) => {
        setServers(r.servers);
        setError(undefined);
      },
      (e) => ctl.signal.aborted || setError(e),
    );
    return () => ctl.abort();
  }, []);

  // A search ranks the servers by what they do (POST /api/search/semantic, tools included); where that
  // endpoint is not served, the list's own text filter (GET /api/servers?query=) answers instead.
  const [ranked, setRanked] = useState<Ranked | undefined>(undefined);
  useEffect(() => {
    setRanked(undefined);
    if (!query.trim()) return;
    const ctl = new AbortController();
    searchServers(query, ctl.signal).then(setRanked, (e) => ctl.signal.aborted || setError(e));
    return () => ctl.abort();
  }, [query]);

  // The search box updates the URL (and so the list) a moment after typing stops.
  useEffect(() => {
    if (typed === query) return;
    const t = setTimeout(() => setQuery({ q: typed }), 250);
    return () => clearTimeout(t);
  }, [typed]);

  const live = health.value;
  const rows = useMemo(() => {
    const byPath = new Map((servers ?? []).map((s) => [s.path, s]));
    const found = ranked ? ranked.paths.flatMap((p) => byPath.get(p) ?? []) : query ? [] : (servers ?? []);
    const list = found.map((s) => ({ ...s, health_status: live[s.path]?.status ?? s.health_status }));
    return list.filter(
      (s) =>
        // A disabled server is of use only to who may switch it back on: others do not see it in the console.
        (s.is_enabled || can('toggle_service', s.path) || can('modify_service', s.path)) &&
        (!tag || s.tags.includes(tag)) &&
        (!state ||
          (state === 'enabled' && s.is_enabled) ||
          (state === 'disabled' && !s.is_enabled) ||
          healthClass(s.health_status) === state),
    );
  }, [servers, ranked, query, live, tag, state]);
  const allTags = useMemo(() => [...new Set((servers ?? []).flatMap((s) => s.tags))].sort(), [servers]);

  async function toggle(s: ServerSummary) {
    setBusy(s.path);
    try {
      const r = await api<{ is_enabled: boolean }>(`/api/toggle/${encodeURIComponent(bare(s.path))}`, {
        form: { enabled: String(!s.is_enabled) },
      });
      setServers((list) => list?.map((x) => (x.path === s.path ? { ...x, is_enabled: r.is_enabled } : x)));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <section>
      <PageHeader
        title="MCP servers"
        sub={
          <>
            {servers ? `${rows.length} of ${servers.length} shown` : ' '}
            {ranked && <span data-search-mode={ranked.mode}> · ranked by search ({ranked.mode})</span>} · health feed{' '}
            <span data-feed={feedState.value}>{feedState.value}</span>
          </>
        }
      >
        {can('register_service') && (
          <a class="btn primary" href={href('/servers/new')}>
            Register server
          </a>
        )}
      </PageHeader>
      <div class="toolbar">
        <label class="sr-only" for="server-search">
          Search servers
        </label>
        <input
          id="server-search"
          type="search"
          placeholder="Search name, description, tags, tools  ( / )"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
          size={40}
        />
        <label class="sr-only" for="server-state">
          Filter by state
        </label>
        <select id="server-state" value={state} onChange={(e) => setQuery({ state: e.currentTarget.value })}>
          <option value="">Any state</option>
          <option value="enabled">Enabled</option>
          <option value="disabled">Disabled</option>
          <option value="healthy">Healthy</option>
          <option value="unhealthy">Unhealthy</option>
          <option value="unknown">Unknown</option>
        </select>
        <label class="sr-only" for="server-tag">
          Filter by tag
        </label>
        <select id="server-tag" value={tag} onChange={(e) => setQuery({ tag: e.currentTarget.value })}>
          <option value="">Any tag</option>
          {allTags.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </div>
      <ErrorBox error={error} />
      {!servers && !error && <Loading what="servers" />}
      {servers && query && !ranked && !error && <Loading what="search results" />}
      {servers && (!query || ranked) && (
        <div class="table-wrap">
          <table aria-label="MCP servers">
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Path</th>
                <th scope="col">Health</th>
                <th scope="col">Tools</th>
                <th scope="col">Tags</th>
                <th scope="col">Enabled</th>
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, limit).map((s) => (
                <tr key={s.path} data-path={s.path}>
                  <td>
                    <a href={href(`/servers/${bare(s.path)}`)}>{s.server_name || s.name}</a>{' '}
                    {s.tags.includes('security-pending') && <Shield label="Security scan pending" />}
                    <span class="desc">{s.description}</span>
                    {ranked?.tools[s.path]?.length ? (
                      <span class="desc" data-matching-tools>
                        matching tools: {ranked.tools[s.path].join(', ')}
                      </span>
                    ) : null}
                  </td>
                  <td class="mono">{s.path}</td>
                  <td>
                    <HealthBadge status={s.health_status} />
                  </td>
                  <td class="num">{live[s.path]?.num_tools ?? s.num_tools}</td>
                  <td>
                    <Tags tags={s.tags} />
                  </td>
                  <td>
                    <label class="switch">
                      <input
                        type="checkbox"
                        checked={s.is_enabled}
                        disabled={busy === s.path || !can('toggle_service', s.path)}
                        onChange={() => toggle(s)}
                      />
                      <span class="sr-only">Enable {s.server_name || s.path}</span>
                    </label>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 && <p class="muted empty">No servers match.</p>}
        </div>
      )}
    </section>
  );
}
