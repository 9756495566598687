import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';

interface Group {
  name: string;
  description: string;
  system: boolean;
  has_scope: boolean;
  mapped_scopes: string[];
  server_count: number;
  idp_synced: boolean;
}

interface ScopeDoc {
  _id: string;
  group_mappings: string[];
  server_access: unknown[];
  ui_permissions: Record<string, string[]>;
}

/** Groups and the scope documents that map them to rights (admins). */
export function GroupsPage() {
  const [groups, gErr, reloadGroups] = useApi(
    () => api<{ groups: Group[]; total: number }>('/api/internal/list-groups'),
    [],
  );
  const [scopes, sErr] = useApi(() => api<{ scopes: ScopeDoc[]; total: number }>('/api/scopes'), []);
  const [name, setName] = useState('');
  const [desc, setDesc] = useState('');
  const [error, setError] = useState<unknown>(undefined);

  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      await api('/api/internal/create-group', { form: { group_name: name, description: desc } });
      setName('');
      setDesc('');
      reloadGroups();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section>
      <PageHeader title="Groups and scopes" sub="Who may do what: groups map to scope documents." />
      <h2>Groups</h2>
      <ErrorBox error={gErr} />
      {!groups && !gErr && <Loading what="groups" />}
      {groups && (
        <div class="table-wrap">
          <table aria-label="Groups">
            <thead>
              <tr>
                <th scope="col">Group</th>
                <th scope="col">Description</th>
                <th scope="col">Scopes</th>
                <th scope="col">Servers</th>
                <th scope="col">Kind</th>
              </tr>
            </thead>
            <tbody>
              {groups.groups.map((g) => (
                <tr key={g.name}>
                  <td class="mono">{g.name}</td>
                  <td>{g.description}</td>
                  <td class="mono">{g.mapped_scopes.join(', ')}</td>
                  <td class="num">{g.server_count}</td>
                  <td>{g.system ? 'system' : g.idp_synced ? 'identity provider' : 'created here'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form class="form card" onSubmit={create}>
        <h3>Create a group</h3>
        <ErrorBox error={error} />
        <label>
          Name
          <input name="group_name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
        <label>
          Description
          <input name="description" value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="submit" class="btn primary">
            Create group
          </button>
        </div>
      </form>
      <h2>Scope documents</h2>
      <ErrorBox error={sErr} />
      {scopes?.scopes.map((s) => (
        <details class="card" key={s._id}>
          <summary>
            <strong class="mono">{s._id}</strong>{' '}
            <span class="muted">groups: {s.group_mappings.join(', ') || '—'}</span>
          </summary>
          <pre>{JSON.stringify(s, null, 2)}</pre>
        </details>
      ))}
    </section>
  );
}
