import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';
import type { ServerSummary } from './types.ts';

interface ServerRule {
  server?: string;
  methods?: string[];
  tools?: string[];
  agents?: { actions: Array<{ action: string; resources: string[] }> };
}

interface ScopeDoc {
  _id: string;
  description?: string;
  group_mappings: string[];
  server_access: ServerRule[];
  ui_permissions: Record<string, string[]>;
}

interface GroupInfo {
  name: string;
  description: string;
  system: boolean;
  mapped_scopes: string[];
  server_count: number;
  created_at?: string;
}

/**
 * Create and delete groups, and put servers in them, through the internal admin API (POST
 * /api/internal/create-group, delete-group, add-to-groups, remove-from-groups), which takes the signed-in
 * admin's session with its CSRF token (api.ts sends it). The API's own message is shown on refusal: a system
 * group (named in scopes/) cannot be deleted, a group still granting servers needs force.
 */
function GroupManager(props: { onChange: () => void }) {
  const [r, loadError, reload] = useApi(
    () => api<{ groups: GroupInfo[]; total: number }>('/api/internal/list-groups'),
    [],
  );
  const [servers] = useApi(() => api<{ servers: ServerSummary[] }>('/api/servers'), []);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState('');
  const [member, setMember] = useState({ server: '', group: '' });

  const act = async (call: () => Promise<{ message: string }>) => {
    setError(undefined);
    setDone('');
    try {
      setDone((await call()).message);
      reload();
      props.onChange();
    } catch (e) {
      setError(e);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const res = await api<{ message: string }>('/api/internal/create-group', {
        json: { group_name: name.trim(), description: description.trim() || undefined },
      });
      setName('');
      setDescription('');
      return res;
    });
  };
  const remove = (g: GroupInfo) => {
    const extra = g.server_count ? ` It still grants ${g.server_count} server rule(s), which go with it.` : '';
    if (!confirm(`Delete group '${g.name}' and its scope document?${extra}`)) return;
    void act(() =>
      api<{ message: string }>('/api/internal/delete-group', {
        json: { group_name: g.name, force: g.server_count > 0 },
      }),
    );
  };
  const membership = (op: 'add-to-groups' | 'remove-from-groups') =>
    act(() =>
      api<{ message: string }>(`/api/internal/${op}`, {
        json: { server_name: member.server, group_names: member.group },
      }),
    );

  return (
    <>
      <h2>Groups</h2>
      <ErrorBox error={loadError} />
      {!r && !loadError && <Loading what="groups" />}
      {done && (
        <p class="alert ok" role="status">
          {done}
        </p>
      )}
      <ErrorBox error={error} />
      {r && (
        <div class="table-wrap">
          <table aria-label="Groups">
            <thead>
              <tr>
                <th scope="col">Group</th>
                <th scope="col">Description</th>
                <th scope="col">Scopes it maps to</th>
                <th scope="col">Server rules</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {r.groups.map((g) => (
                <tr key={g.name} data-group={g.name}>
                  <td class="mono">
                    {g.name}
                    {g.system && <span class="muted"> (system)</span>}
                  </td>
                  <td>{g.description || '—'}</td>
                  <td class="mono">{g.mapped_scopes.join(', ') || '—'}</td>
                  <td class="num">{g.server_count}</td>
                  <td>
                    <button
                      type="button"
                      class="btn danger"
                      onClick={() => remove(g)}
                      aria-label={`Delete group ${g.name}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="grid-2">
        <form class="form card" onSubmit={create} aria-label="Create a group">
          <h3>Create a group</h3>
          <label>
            Group name
            <input
              name="group_name"
              required
              maxLength={128}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <span class="hint">
              Letters, digits, dot, dash, underscore. A scope document of the same name is made with it.
            </span>
          </label>
          <label>
            Group description
            <input
              name="description"
              maxLength={500}
              value={description}
              onInput={(e) => setDescription(e.currentTarget.value)}
            />
          </label>
          <div class="row">
            <button type="submit" class="btn primary">
              Create group
            </button>
          </div>
        </form>
        <form class="form card" onSubmit={(e) => e.preventDefault()} aria-label="Server membership">
          <h3>Server membership</h3>
          <label>
            Server
            <select
              aria-label="Server"
              value={member.server}
              onChange={(e) => setMember({ ...member, server: e.currentTarget.value })}
            >
              <option value="">Pick a server</option>
              {(servers?.servers ?? []).map((s) => (
                <option key={s.path} value={s.server_name || s.name}>
                  {s.server_name || s.name} ({s.path})
                </option>
              ))}
            </select>
          </label>
          <label>
            Target group
            <select
              aria-label="Target group"
              value={member.group}
              onChange={(e) => setMember({ ...member, group: e.currentTarget.value })}
            >
              <option value="">Pick a group</option>
              {(r?.groups ?? []).map((g) => (
                <option key={g.name} value={g.name}>
                  {g.name}
                </option>
              ))}
            </select>
          </label>
          <div class="row">
            <button
              type="button"
              class="btn"
              disabled={!member.server || !member.group}
              onClick={() => membership('add-to-groups')}
            >
              Add to group
            </button>
            <button
              type="button"
              class="btn"
              disabled={!member.server || !member.group}
              onClick={() => membership('remove-from-groups')}
            >
              Remove from group
            </button>
          </div>
        </form>
      </div>
    </>
  );
}

/**
 * Groups (managed here, see GroupManager) and the scope documents that map them to rights (admins; read
 * from GET /api/scopes).
 */
export function GroupsPage() {
  const [r, error, reload] = useApi(() => api<{ scopes: ScopeDoc[]; total: number }>('/api/scopes'), []);
  return (
    <section>
      <PageHeader title="Groups and scopes" sub="Who may do what: identity-provider groups map to scope documents." />
      <GroupManager onChange={reload} />
      <ErrorBox error={error} />
      {!r && !error && <Loading what="scopes" />}
      {r && (
        <>
          <h2>Scope documents ({r.total})</h2>
          <div class="table-wrap">
            <table aria-label="Scope documents">
              <thead>
                <tr>
                  <th scope="col">Scope</th>
                  <th scope="col">Servers</th>
                  <th scope="col">UI permissions</th>
                </tr>
              </thead>
              <tbody>
                {r.scopes.map((s) => (
                  <tr key={s._id}>
                    <td class="mono">{s._id}</td>
                    <td class="mono">
                      {s.server_access
                        .filter((a) => a.server)
                        .map((a) => `${a.server} (${(a.methods ?? []).join(' ')})`)
                        .join(', ') || '—'}
                    </td>
                    <td class="mono">
                      {Object.entries(s.ui_permissions)
                        .map(([k, v]) => `${k}: ${v.join(' ')}`)
                        .join('; ') || '—'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {r.scopes.map((s) => (
            <details class="card" key={s._id}>
              <summary>
                <strong class="mono">{s._id}</strong> <span class="muted">full document</span>
              </summary>
              <pre>{JSON.stringify(s, null, 2)}</pre>
            </details>
          ))}
        </>
      )}
    </section>
  );
}
