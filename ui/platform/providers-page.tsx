import { api } from '../api.ts';
import { ErrorBox, Loading, PageHeader, useApi, Tags } from '../components/common.tsx';
import { Badge } from './bits.tsx';

type Check = 'ok' | 'reachable' | 'down';

interface Readiness {
  status: 'ok' | 'degraded' | 'error';
  checks: Record<string, Check>;
}

/**
 * `/readyz` answers 503 with the same body when a provider is down: that body is the answer, not an error, so
 * this one call reads the response itself instead of going through api() (which turns a 503 into an ApiError).
 * /readyz is public and safe: no cookie or CSRF handling is needed.
 */
async function readyz(): Promise<Readiness> {
  const r = await fetch('/readyz', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  if (r.status !== 200 && r.status !== 503) throw new Error(`/readyz answered ${r.status}`);
  return (await r.json()) as Readiness;
}

const split = (key: string) => {
  const i = key.indexOf('/');
  return i < 0 ? [key, ''] : [key.slice(0, i), key.slice(i + 1)];
};

/** Provider health: the service's readiness (/readyz), health with the caller's credentials, and the defaults. */
export function ProvidersPage() {
  const [ready, readyError, reloadReady] = useApi(readyz, []);
  const [status, statusError, reloadStatus] = useApi(
    () => api<{ checks: Record<string, Check> }>('/api/v1/providers/status'),
    [],
  );
  const [listing, listingError] = useApi(
    () => api<Record<string, { default: string | null; available: string[] }>>('/api/v1/providers'),
    [],
  );

  const primitives = Object.keys(listing ?? {}).sort();

  return (
    <section class="pf-page">
      <PageHeader title="Providers" sub="Which provider serves each primitive, and whether it is healthy.">
        <button
          type="button"
          class="btn"
          onClick={() => {
            reloadReady();
            reloadStatus();
          }}
        >
          Refresh
        </button>
      </PageHeader>
      <ErrorBox error={readyError ?? statusError ?? listingError} />
      <div class="pf-cards">
        <div class="pf-card">
          <h2>Service readiness</h2>
          {ready ? (
            <p>
              <Badge value={ready.status === 'error' ? 'down' : ready.status} label={ready.status} />{' '}
              <span class="muted">from /readyz</span>
            </p>
          ) : (
            <Loading what="readiness" />
          )}
        </div>
        <div class="pf-card">
          <h2>Providers down</h2>
          <p class="pf-big">
            {status ? Object.values(status.checks).filter((c) => c === 'down').length : '…'}
            <span class="muted pf-small"> of {status ? Object.keys(status.checks).length : '…'}</span>
          </p>
        </div>
      </div>

      <h2 class="pf-h2">Defaults per primitive</h2>
      {listing ? (
        <table class="pf-table">
          <caption class="sr-only">Default and available providers per primitive</caption>
          <thead>
            <tr>
              <th scope="col">Primitive</th>
              <th scope="col">Default</th>
              <th scope="col">Available</th>
            </tr>
          </thead>
          <tbody>
            {primitives.map((p) => (
              <tr key={p}>
                <td>{p}</td>
                <td>{listing[p].default ? <code>{listing[p].default}</code> : '—'}</td>
                <td>
                  <Tags tags={listing[p].available} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : listingError ? null : (
        <Loading what="providers" />
      )}

      <h2 class="pf-h2">Health</h2>
      {status ? (
        <table class="pf-table">
          <caption class="sr-only">Provider health, as /readyz and with your credentials</caption>
          <thead>
            <tr>
              <th scope="col">Primitive</th>
              <th scope="col">Provider</th>
              <th scope="col">With your credentials</th>
              <th scope="col">/readyz</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(status.checks)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([key, check]) => {
                const [prim, name] = split(key);
                const r = ready?.checks[key];
                return (
                  <tr key={key}>
                    <td>{prim}</td>
                    <td>
                      <code>{name}</code>
                    </td>
                    <td>
                      <Badge value={check} />
                    </td>
                    <td>{r ? <Badge value={r} /> : <span class="muted">—</span>}</td>
                  </tr>
                );
              })}
          </tbody>
        </table>
      ) : statusError ? null : (
        <Loading what="provider health" />
      )}
    </section>
  );
}
