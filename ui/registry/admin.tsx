import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';

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

/**
 * Groups and the scope documents that map them to rights (admins). Both come from GET /api/scopes: the
 * groups are those the documents map. Creating and deleting groups stays with the admin scripts
 * (/api/internal/*, HTTP Basic as the local admin), which a browser session cannot call.
 */
export function GroupsPage() {
  const [r, error] = useApi(() => api<{ scopes: ScopeDoc[]; total: number }>('/api/scopes'), []);
  const groups = new Map<string, string[]>();
  for (const s of r?.scopes ?? []) for (const g of s.group_mappings) groups.set(g, [...(groups.get(g) ?? []), s._id]);
  return (
    <section>
      <PageHeader title="Groups and scopes" sub="Who may do what: identity-provider groups map to scope documents." />
      <ErrorBox error={error} />
      {!r && !error && <Loading what="scopes" />}
      {r && (
        <>
          <h2>Groups</h2>
          <div class="table-wrap">
            <table aria-label="Groups">
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">Scopes it maps to</th>
                </tr>
              </thead>
              <tbody>
                {[...groups].map(([g, scopes]) => (
                  <tr key={g}>
                    <td class="mono">{g}</td>
                    <td class="mono">{scopes.join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p class="muted">
            Groups are created and deleted by the admin scripts (POST /api/internal/create-group and delete-group, HTTP
            Basic as the local admin).
          </p>
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
