import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { CopyButton, ErrorBox, PageHeader, useApi } from '../components/common.tsx';
import { me } from '../session.ts';
import type { ServerSummary } from './types.ts';

interface Minted {
  access_token: string;
  expires_in: number;
  scope: string;
}

/**
 * Mint a self-signed token (POST /api/tokens/generate): a subset of the user's scopes, 1-24 h, optionally
 * bound to one resource. The token is shown once: the page keeps it only until the user leaves.
 */
export function TokensPage() {
  const mine = me.value?.scopes ?? [];
  const [picked, setPicked] = useState<string[]>([]);
  const [hours, setHours] = useState('8');
  const [description, setDescription] = useState('');
  const [bindType, setBindType] = useState('');
  const [bindId, setBindId] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [minted, setMinted] = useState<Minted | undefined>(undefined);
  const [servers] = useApi(() => api<{ servers: ServerSummary[] }>('/api/servers'), []);

  async function submit(e: Event) {
    e.preventDefault();
    setError(undefined);
    try {
      setMinted(
        await api<Minted>('/api/tokens/generate', {
          json: {
            requested_scopes: picked.length ? picked : undefined,
            expires_in_hours: Number(hours),
            description: description || undefined,
            resource: bindType ? { type: bindType, id: bindId } : undefined,
          },
        }),
      );
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section>
      <PageHeader title="Access tokens" sub="For scripts and MCP clients. Bearer tokens signed by this registry." />
      {minted && (
        <div class="card" role="status">
          <p class="alert ok">
            Token minted: valid {Math.round(minted.expires_in / 3600)} h, scopes{' '}
            <span class="mono">{minted.scope || '—'}</span>. Copy it now: it is not shown again.
          </p>
          <div class="secret">
            <code data-token>{minted.access_token}</code>
            <CopyButton text={minted.access_token} label="Copy token" />
          </div>
        </div>
      )}
      <form class="form card" onSubmit={submit}>
        <ErrorBox error={error} />
        <fieldset>
          <legend>Scopes</legend>
          <p class="hint muted">None picked: all of yours.</p>
          {mine.map((s) => (
            <label class="row" key={s}>
              <input
                type="checkbox"
                name="scope"
                value={s}
                checked={picked.includes(s)}
                onChange={(e) => setPicked(e.currentTarget.checked ? [...picked, s] : picked.filter((x) => x !== s))}
              />
              <span class="mono">{s}</span>
            </label>
          ))}
        </fieldset>
        <label>
          Expires in (hours, 1 to 24)
          <input
            name="hours"
            type="number"
            min={1}
            max={24}
            value={hours}
            onInput={(e) => setHours(e.currentTarget.value)}
          />
        </label>
        <label>
          Description
          <input
            name="description"
            maxLength={500}
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </label>
        <fieldset>
          <legend>Bind to one resource (optional)</legend>
          <p class="hint muted">A bound token works only for that resource.</p>
          <label>
            Resource type
            <select name="resource_type" value={bindType} onChange={(e) => setBindType(e.currentTarget.value)}>
              <option value="">Not bound</option>
              <option value="server">server</option>
              <option value="virtual_server">virtual_server</option>
              <option value="agent">agent</option>
              <option value="skill">skill</option>
            </select>
          </label>
          {bindType && (
            <label>
              Resource id
              <span class="hint">A server path without the slash (e.g. everything), an agent path or a skill name</span>
              <input
                name="resource_id"
                list="bind-servers"
                value={bindId}
                onInput={(e) => setBindId(e.currentTarget.value)}
              />
              <datalist id="bind-servers">
                {(servers?.servers ?? []).map((s) => (
                  <option key={s.path} value={s.path.replace(/^\//, '')} />
                ))}
              </datalist>
            </label>
          )}
        </fieldset>
        <div class="row">
          <button type="submit" class="btn primary">
            Mint token
          </button>
        </div>
      </form>
    </section>
  );
}
