import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, Shield, Tags, useApi } from '../components/common.tsx';
import { href } from '../router.ts';
import { type AgentItem, bare } from './types.ts';

/** A2A agents the caller may see, with a text filter (the list's `query`). */
export function AgentsPage() {
  const [query, setQuery] = useState('');
  const [r, error] = useApi(
    () => api<{ agents: AgentItem[]; total_count: number }>('/api/agents', { query: { query } }),
    [query],
  );
  return (
    <section>
      <PageHeader title="A2A agents" sub={r ? `${r.total_count} agent(s)` : ' '} />
      <div class="toolbar">
        <label class="sr-only" for="agent-search">
          Search agents
        </label>
        <input
          id="agent-search"
          type="search"
          placeholder="Search agents  ( / )"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      </div>
      <ErrorBox error={error} />
      {!r && !error && <Loading what="agents" />}
      {r && (
        <div class="table-wrap">
          <table aria-label="Agents">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Version</th>
                <th scope="col">Trust</th>
                <th scope="col">Skills</th>
                <th scope="col">Tags</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {r.agents.map((a) => (
                <tr key={a.path}>
                  <td>
                    <a href={href(`/agents/${bare(a.path)}`)}>{a.name}</a>{' '}
                    {a.tags.includes('security-pending') && <Shield label="Security scan pending" />}
                    <span class="desc">{a.description}</span>
                  </td>
                  <td class="mono">{a.version}</td>
                  <td>{a.trust_level}</td>
                  <td class="num">{a.num_skills}</td>
                  <td>
                    <Tags tags={a.tags} />
                  </td>
                  <td>{a.is_enabled ? 'enabled' : 'disabled'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {r.agents.length === 0 && <p class="muted empty">No agents.</p>}
        </div>
      )}
    </section>
  );
}

interface AgentCard {
  name: string;
  description?: string;
  url?: string;
  version?: string;
  path?: string;
  skills?: Array<{ id?: string; name: string; description?: string; tags?: string[] }>;
  [k: string]: unknown;
}

export function AgentDetailPage(props: { path: string }) {
  const [a, error] = useApi(() => api<AgentCard>(`/api/agents/${encodeURIComponent(props.path)}`), [props.path]);
  if (error) return <ErrorBox error={error} />;
  if (!a) return <Loading what="agent" />;
  return (
    <section>
      <PageHeader title={a.name} sub={<span class="mono">{a.url}</span>} />
      <p>{a.description}</p>
      <h2>Skills</h2>
      <div class="table-wrap">
        <table aria-label="Agent skills">
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">Description</th>
              <th scope="col">Tags</th>
            </tr>
          </thead>
          <tbody>
            {(a.skills ?? []).map((s) => (
              <tr key={s.id ?? s.name}>
                <td>{s.name}</td>
                <td>{s.description}</td>
                <td>
                  <Tags tags={s.tags ?? []} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Agent card</h2>
      <pre>{JSON.stringify(a, null, 2)}</pre>
    </section>
  );
}
