import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi } from '../components/common.tsx';
import { href, navigate } from '../router.ts';
import { type ServerDetail, bare } from './types.ts';

interface Fields {
  name: string;
  path: string;
  description: string;
  proxy_pass_url: string;
  tags: string;
  license: string;
  auth_scheme: string;
  auth_header_name: string;
  auth_credential: string;
}

const EMPTY: Fields = {
  name: '',
  path: '',
  description: '',
  proxy_pass_url: '',
  tags: '',
  license: '',
  auth_scheme: 'none',
  auth_header_name: '',
  auth_credential: '',
};

/**
 * Register (no `existing`) or edit a server. The API's validation messages are shown as they come: the
 * whole message on top, and for a 422 each field's message beside its input. The credential is write-only:
 * the field starts empty, and left empty on an edit it keeps the stored one.
 */
function ServerForm(props: { existing?: ServerDetail }) {
  const e = props.existing;
  const [f, setF] = useState<Fields>(
    e
      ? {
          ...EMPTY,
          name: e.server_name,
          path: e.path,
          description: e.description,
          proxy_pass_url: e.proxy_pass_url ?? '',
          tags: e.tags.join(', '),
          license: e.license,
          auth_scheme: e.auth_scheme,
          auth_header_name: e.auth_header_name ?? '',
        }
      : EMPTY,
  );
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState<Record<string, unknown> | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const fieldErrors = error instanceof ApiError ? error.fields : {};

  const input = (
    key: keyof Fields,
    label: string,
    opts: { hint?: string; type?: 'text' | 'password'; required?: boolean } = {},
  ) => (
    <label>
      {label}
      {opts.hint && <span class="hint">{opts.hint}</span>}
      <input
        name={key}
        type={(opts.type ?? 'text') as 'text'}
        value={f[key]}
        required={opts.required}
        autocomplete={opts.type === 'password' ? 'new-password' : 'off'}
        aria-invalid={fieldErrors[key] ? 'true' : undefined}
        onInput={(ev) => setF({ ...f, [key]: ev.currentTarget.value })}
      />
      {fieldErrors[key] && <span class="field-error">{fieldErrors[key]}</span>}
    </label>
  );

  async function submit(ev: Event) {
    ev.preventDefault();
    setBusy(true);
    setError(undefined);
    const body: Record<string, unknown> = {
      name: f.name,
      description: f.description,
      proxy_pass_url: f.proxy_pass_url,
      tags: f.tags,
      license: f.license || undefined,
    };
    if (!e) body.path = f.path;
    // Credential fields go only when the user set them: an edit without them keeps the stored credential.
    if (f.auth_credential || (e && f.auth_scheme !== e.auth_scheme) || (!e && f.auth_scheme !== 'none')) {
      body.auth_scheme = f.auth_scheme;
      if (f.auth_credential) body.auth_credential = f.auth_credential;
      if (f.auth_header_name) body.auth_header_name = f.auth_header_name;
    }
    try {
      if (e) {
        await api(`/api/servers/${encodeURIComponent(bare(e.path))}`, { method: 'PUT', json: body });
        navigate(`/servers/${bare(e.path)}`);
      } else {
        const r = await api<Record<string, unknown>>('/api/servers/register', { json: body });
        setSaved(r);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  if (saved)
    return (
      <div class="card">
        <p class="alert ok" role="status">
          {String(saved.message)}
        </p>
        {saved.security_scan !== undefined && (
          <>
            <h2>Security scan</h2>
            <pre>{JSON.stringify(saved.security_scan, null, 2)}</pre>
          </>
        )}
        <a class="btn primary" href={href(`/servers/${bare(String(saved.path))}`)}>
          Open {String(saved.path)}
        </a>{' '}
        <a class="btn" href={href('/servers')}>
          Back to servers
        </a>
      </div>
    );

  return (
    <form class="form" onSubmit={submit} noValidate>
      <ErrorBox error={error} />
      {input('name', 'Name', { required: true })}
      {!e &&
        input('path', 'Path', {
          hint: 'Starts with /, e.g. /everything; the gateway serves it at /<path>/mcp',
          required: true,
        })}
      {input('description', 'Description', { required: true })}
      {input('proxy_pass_url', 'Backend URL', { hint: 'http or https address of the MCP server', required: true })}
      {input('tags', 'Tags', { hint: 'Comma-separated' })}
      {input('license', 'License')}
      <fieldset>
        <legend>Backend credential</legend>
        <label>
          Scheme
          <select
            name="auth_scheme"
            value={f.auth_scheme}
            onChange={(ev) => setF({ ...f, auth_scheme: ev.currentTarget.value })}
          >
            <option value="none">none</option>
            <option value="bearer">bearer</option>
            <option value="api_key">api_key</option>
          </select>
        </label>
        {f.auth_scheme === 'api_key' && input('auth_header_name', 'Header name', { hint: 'e.g. X-API-Key' })}
        {f.auth_scheme !== 'none' &&
          input('auth_credential', e ? 'New credential' : 'Credential', {
            type: 'password',
            hint: e?.auth_credential_encrypted
              ? 'Write-only: a credential is stored (encrypted). Leave empty to keep it.'
              : 'Write-only: stored encrypted, never shown again.',
          })}
      </fieldset>
      <div class="row">
        <button type="submit" class="btn primary" disabled={busy}>
          {busy ? 'Saving…' : e ? 'Save changes' : 'Register server'}
        </button>
        <a class="btn" href={href(e ? `/servers/${bare(e.path)}` : '/servers')}>
          Cancel
        </a>
      </div>
    </form>
  );
}

export function RegisterServerPage() {
  return (
    <section>
      <PageHeader title="Register a server" sub="An MCP server reachable over streamable HTTP or SSE." />
      <ServerForm />
    </section>
  );
}

export function EditServerPage(props: { path: string }) {
  const [s, error] = useApi(() => api<ServerDetail>(`/api/servers/${encodeURIComponent(props.path)}`), [props.path]);
  return (
    <section>
      <PageHeader title={`Edit ${s ? s.path : `/${props.path}`}`} />
      <ErrorBox error={error} />
      {!s && !error && <Loading what="server" />}
      {s && <ServerForm existing={s} />}
    </section>
  );
}
