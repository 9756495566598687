import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';
import { ListState, ListTable, SelectFilter } from '../components/list.tsx';
import { navigate } from '../router.ts';
import { Badge, Empty, enc, href, queryParam, when, withQuery } from './bits.tsx';

const COLUMNS = [
  { label: 'Session' },
  { label: 'Status' },
  { label: 'Messages', num: true },
  { label: 'Last activity' },
  { label: 'Actions', hidden: true },
];

interface SessionSummary {
  session_id: string;
  actor_id: string;
  message_count: number;
  last_activity: string;
  status: 'running' | 'idle';
}

/** The caller's sessions with an agent (GET /agents/{name}/sessions), most recent first, with their history. */
export function SessionsPage() {
  const agent = queryParam('agent');
  const open = queryParam('session');
  const [agents] = useApi(() => api<{ agents: Array<{ name: string }> }>('/api/v1/agents'), []);
  const [data, error, reload] = useApi(
    () =>
      agent
        ? api<{ sessions: SessionSummary[] }>(`/api/v1/agents/${enc(agent)}/sessions`)
        : Promise.resolve({ sessions: [] }),
    [agent],
  );
  const [history] = useApi(
    () =>
      agent && open
        ? api<{ messages: Array<{ role: string; content: string }> }>(
            `/api/v1/agents/${enc(agent)}/sessions/${enc(open)}`,
          )
        : Promise.resolve(undefined),
    [agent, open],
  );
  const [actionError, setActionError] = useState<unknown>();

  const remove = async (sid: string) => {
    if (!agent || !confirm(`Delete session ${sid} and its history?`)) return;
    try {
      await api(`/api/v1/agents/${enc(agent)}/sessions/${enc(sid)}`, { method: 'DELETE' });
      reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <section class="pf-page">
      <PageHeader
        title="Sessions"
        sub="Conversations with an agent: open one to read it, or continue it in the chat."
      />
      <div class="pf-toolbar">
        <SelectFilter
          id="pf-sessions-agent"
          label="Agent"
          value={agent ?? ''}
          placeholder="Choose an agent…"
          options={(agents?.agents ?? []).map((a) => a.name)}
          onChange={(name) => navigate(withQuery('/platform/sessions', { agent: name }))}
        />
      </div>
      <ErrorBox error={error ?? actionError} />
      {agent ? (
        <ListState
          data={data}
          items={(d) => d.sessions}
          error={error}
          what="sessions"
          empty={
            <Empty>
              No sessions with {agent} yet. <a href={href('/platform/chat', { agent })}>Start one</a>.
            </Empty>
          }
        >
          {(sessions) => (
            <div class="pf-split">
              <ListTable caption={`Sessions of ${agent}`} columns={COLUMNS}>
                {sessions.map((s) => (
                  <tr key={s.session_id} class={s.session_id === open ? 'pf-selected' : ''}>
                    <td>
                      <a
                        href={href('/platform/sessions', { agent, session: s.session_id })}
                        aria-current={s.session_id === open ? 'true' : undefined}
                      >
                        <code>{s.session_id}</code>
                      </a>
                    </td>
                    <td>
                      <Badge value={s.status} />
                    </td>
                    <td class="pf-num">{s.message_count}</td>
                    <td>{when(s.last_activity)}</td>
                    <td>
                      <div class="pf-row-actions">
                        <a href={href('/platform/chat', { agent, session: s.session_id })}>
                          {s.status === 'running' ? 'Follow' : 'Continue'}
                        </a>
                        <button type="button" class="pf-link pf-danger" onClick={() => remove(s.session_id)}>
                          Delete<span class="sr-only"> session {s.session_id}</span>
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </ListTable>
              {open ? (
                <aside class="pf-panel" aria-label={`History of session ${open}`}>
                  <h2>History</h2>
                  {history ? (
                    history.messages.length ? (
                      <ol class="pf-history">
                        {history.messages.map((m, i) => (
                          <li key={i} class={`pf-msg pf-msg-${m.role}`}>
                            <div class="pf-msg-role">{m.role}</div>
                            <div class="pf-msg-text">{m.content}</div>
                          </li>
                        ))}
                      </ol>
                    ) : (
                      <Empty>No stored messages (a run may still be in progress).</Empty>
                    )
                  ) : (
                    <Loading what="history" />
                  )}
                </aside>
              ) : null}
            </div>
          )}
        </ListState>
      ) : (
        <Empty>Choose an agent to see its sessions.</Empty>
      )}
    </section>
  );
}
