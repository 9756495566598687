import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi, Tags } from '../components/common.tsx';
import { Empty, enc, href, when } from './bits.tsx';
import type { Spec } from './spec-form.ts';

interface AgentList {
  agents: Array<Spec & { name: string; model: string; owner_id: string; updated_at: string; description: string }>;
  total: number;
}

const enabledPrimitives = (spec: Spec) =>
  Object.entries((spec.primitives ?? {}) as Record<string, { enabled?: boolean }>)
    .filter(([, v]) => v?.enabled)
    .map(([k]) => k);

/** Agents the caller owns or that are shared with them (GET /api/v1/agents). */
export function AgentsPage() {
  const [data, error, reload] = useApi(() => api<AgentList>('/api/v1/agents'), []);
  const [filter, setFilter] = useState('');
  const [actionError, setActionError] = useState<unknown>();

  const remove = async (name: string) => {
    if (!confirm(`Delete agent '${name}'? Its sessions stay in memory but it can no longer run.`)) return;
    try {
      await api(`/api/v1/agents/${enc(name)}`, { method: 'DELETE' });
      reload();
    } catch (err) {
      setActionError(err);
    }
  };

  const f = filter.trim().toLowerCase();
  const agents = (data?.agents ?? []).filter(
    (a) => !f || a.name.toLowerCase().includes(f) || a.description.toLowerCase().includes(f) || a.model.includes(f),
  );

  return (
    <section class="pf-page">
      <PageHeader
        title="Agents"
        sub="Declarative agents of the platform: chat with them, edit their spec, see their sessions."
      >
        <a class="btn primary" href={href('/platform/new-agent')}>
          New agent
        </a>
      </PageHeader>
      <ErrorBox error={actionError} />
      <div class="pf-toolbar">
        <label class="pf-inline-label" for="pf-agent-filter">
          Filter
        </label>
        <input
          id="pf-agent-filter"
          class="pf-filter"
          type="search"
          placeholder="name, model or description"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
        <span class="muted">{data ? `${agents.length} of ${data.total}` : ''}</span>
      </div>
      {!data && !error ? <Loading what="agents" /> : null}
      <ErrorBox error={error} />
      {data && agents.length === 0 ? (
        <Empty>
          No agents{f ? ' match the filter' : ' yet'}. <a href={href('/platform/new-agent')}>Create one</a>.
        </Empty>
      ) : null}
      {agents.length > 0 ? (
        <table class="pf-table">
          <caption class="sr-only">Agents</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Model</th>
              <th scope="col">Primitives</th>
              <th scope="col">Owner</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.name}>
                <td>
                  <a href={href('/platform/chat', { agent: a.name })} class="pf-strong">
                    {a.name}
                  </a>
                  {a.description ? <div class="muted pf-small">{a.description}</div> : null}
                </td>
                <td>
                  <code>{a.model}</code>
                </td>
                <td>
                  <Tags tags={enabledPrimitives(a)} />
                </td>
                <td>{a.owner_id}</td>
                <td>{when(a.updated_at)}</td>
                <td>
                  <div class="pf-row-actions">
                    <a href={href('/platform/chat', { agent: a.name })} aria-label={`Chat with ${a.name}`}>
                      Chat
                    </a>
                    <a href={href('/platform/sessions', { agent: a.name })} aria-label={`Sessions of ${a.name}`}>
                      Sessions
                    </a>
                    <a href={href(`/platform/agents/${enc(a.name)}`)} aria-label={`Edit ${a.name}`}>
                      Edit
                    </a>
                    <button
                      type="button"
                      class="pf-link pf-danger"
                      onClick={() => remove(a.name)}
                      aria-label={`Delete ${a.name}`}
                    >
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
