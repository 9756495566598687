import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorBox, Loading, PageHeader } from '../components/common.tsx';
import { navigate } from '../router.ts';
import { enc, href, withQuery } from './bits.tsx';
import {
  FORM_FIELDS,
  FORM_PRIMITIVES,
  formOf,
  newSpec,
  parseSpecJson,
  placeErrors,
  requestBody,
  type PlacedErrors,
  type Spec,
  type SpecForm,
  specOf,
} from './spec-form.ts';

const noErrors: PlacedErrors = { fields: {}, top: [] };

function FieldError({ id, messages }: { id: string; messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <p class="pf-field-error" id={id}>
      {messages.join('; ')}
    </p>
  );
}

/**
 * Create (`/platform/new-agent`) or edit (`/platform/agents/:name`) an agent spec, as a form or as JSON; the
 * API's validation messages land at the fields they name.
 */
export function AgentEditPage({ name: editing }: { name?: string }) {
  const [base, setBase] = useState<Spec | undefined>(editing ? undefined : newSpec());
  const [form, setForm] = useState<SpecForm>(formOf(base ?? newSpec()));
  const [view, setView] = useState<'form' | 'json'>('form');
  const [json, setJson] = useState('');
  const [errors, setErrors] = useState<PlacedErrors>(noErrors);
  const [loadError, setLoadError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(
    editing && new URLSearchParams(window.location.search).has('created') ? `Created agent '${editing}'.` : '',
  );

  useEffect(() => {
    if (!editing) return;
    api<Spec>(`/api/v1/agents/${enc(editing)}`).then((spec) => {
      setBase(spec);
      setForm(formOf(spec));
    }, setLoadError);
  }, [editing]);

  /** The spec as the current view shows it, or undefined (with the message shown) when the JSON does not parse. */
  const current = (): Spec | undefined => {
    if (view === 'form') return specOf(form, base ?? newSpec());
    const parsed = parseSpecJson(json);
    if ('error' in parsed) {
      setErrors({ fields: {}, top: [parsed.error] });
      return undefined;
    }
    return parsed.spec;
  };

  const switchTo = (next: 'form' | 'json') => {
    if (next === view) return;
    const spec = current();
    if (!spec) return;
    setErrors(noErrors);
    if (next === 'json') setJson(JSON.stringify(requestBody(spec, editing ? 'update' : 'create'), null, 2));
    else {
      setBase(spec);
      setForm(formOf(spec));
    }
    setView(next);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    const spec = current();
    if (!spec) return;
    setSaving(true);
    setSaved('');
    setErrors(noErrors);
    try {
      const out = editing
        ? await api<Spec>(`/api/v1/agents/${enc(editing)}`, { method: 'PUT', json: requestBody(spec, 'update') })
        : await api<Spec>('/api/v1/agents', { method: 'POST', json: requestBody(spec, 'create') });
      setBase(out);
      setForm(formOf(out));
      if (view === 'json') setJson(JSON.stringify(requestBody(out, editing ? 'update' : 'create'), null, 2));
      // A new agent continues on its own page (the page remounts, so the message rides in the URL).
      if (!editing) navigate(withQuery(`/platform/agents/${enc(String(out.name))}`, { created: '1' }));
      else setSaved(`Saved agent '${out.name}'.`);
    } catch (err) {
      const placed =
        err instanceof ApiError ? placeErrors(err.detail, FORM_FIELDS) : { fields: {}, top: [String(err)] };
      // In the JSON view every message goes on top: there are no fields to put them at.
      setErrors(
        view === 'json'
          ? {
              fields: {},
              top: [...Object.entries(placed.fields).map(([k, v]) => `${k}: ${v.join('; ')}`), ...placed.top],
            }
          : placed,
      );
      requestAnimationFrame(() =>
        (
          document.querySelector('.pf-form [aria-invalid="true"], .pf-form .alert.error') as HTMLElement | null
        )?.focus(),
      );
    } finally {
      setSaving(false);
    }
  };

  if (loadError) return <ErrorBox error={loadError} />;
  if (!base) return <Loading what="the agent" />;

  const text = (name: keyof SpecForm, label: string, props: Record<string, unknown> = {}) => {
    const id = `pf-spec-${name}`;
    const msgs = errors.fields[name];
    return (
      <div class="pf-field">
        <label for={id}>{label}</label>
        <input
          id={id}
          name={name}
          value={form[name] as string}
          aria-invalid={msgs ? 'true' : undefined}
          aria-describedby={msgs ? `${id}-error` : undefined}
          onInput={(e) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value })}
          {...props}
        />
        <FieldError id={`${id}-error`} messages={msgs} />
      </div>
    );
  };

  return (
    <section class="pf-page">
      <PageHeader title={editing ? `Edit agent ${editing}` : 'New agent'}>
        {editing ? (
          <a class="btn" href={href('/platform/chat', { agent: editing })}>
            Chat
          </a>
        ) : null}
        <a class="btn" href={href('/platform/agents')}>
          All agents
        </a>
      </PageHeader>
      <div class="pf-tabs" role="tablist" aria-label="Editor view">
        {(['form', 'json'] as const).map((v) => (
          <button
            key={v}
            type="button"
            role="tab"
            id={`pf-tab-${v}`}
            aria-selected={view === v}
            aria-controls="pf-spec-panel"
            class={view === v ? 'pf-tab pf-tab-active' : 'pf-tab'}
            // The tab pattern: one tab stop, arrow keys move between the tabs.
            tabIndex={view === v ? 0 : -1}
            onClick={() => switchTo(v)}
            onKeyDown={(e) => {
              if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
              e.preventDefault();
              const next = v === 'form' ? 'json' : 'form';
              switchTo(next);
              requestAnimationFrame(() => document.getElementById(`pf-tab-${next}`)?.focus());
            }}
          >
            {v === 'form' ? 'Form' : 'JSON'}
          </button>
        ))}
      </div>
      <div id="pf-spec-panel" role="tabpanel" aria-labelledby={`pf-tab-${view}`}>
        <form class="pf-form" onSubmit={save} noValidate>
          {errors.top.length ? (
            <div class="alert error" role="alert" tabIndex={-1}>
              <strong>The agent was not saved:</strong>
              <ul>
                {errors.top.map((m) => (
                  <li key={m}>{m}</li>
                ))}
              </ul>
            </div>
          ) : null}
          {saved ? (
            <div class="alert ok" role="status">
              {saved}
            </div>
          ) : null}
          {view === 'json' ? (
            <div class="pf-field">
              <label for="pf-spec-json">Agent spec (JSON)</label>
              <textarea
                id="pf-spec-json"
                class="pf-code"
                rows={24}
                spellcheck={false}
                value={json}
                onInput={(e) => setJson((e.target as HTMLTextAreaElement).value)}
              />
            </div>
          ) : (
            <>
              <div class="pf-grid-2">
                {text('name', 'Name', {
                  disabled: !!editing,
                  required: true,
                  autocomplete: 'off',
                  'aria-description': 'Letters, digits, - and _',
                })}
                {text('model', 'Model', { required: true, placeholder: 'e.g. gpt-4o-mini or scripted' })}
              </div>
              {text('description', 'Description')}
              <div class="pf-field">
                <label for="pf-spec-system_prompt">System prompt</label>
                <textarea
                  id="pf-spec-system_prompt"
                  rows={5}
                  value={form.system_prompt}
                  aria-invalid={errors.fields.system_prompt ? 'true' : undefined}
                  aria-describedby={errors.fields.system_prompt ? 'pf-spec-system_prompt-error' : undefined}
                  onInput={(e) => setForm({ ...form, system_prompt: (e.target as HTMLTextAreaElement).value })}
                />
                <FieldError id="pf-spec-system_prompt-error" messages={errors.fields.system_prompt} />
              </div>
              <div class="pf-grid-3">
                {text('max_turns', 'Max turns', { inputMode: 'numeric' })}
                {text('temperature', 'Temperature', { inputMode: 'decimal' })}
                {text('shared_with', 'Shared with', { placeholder: '* or group names, comma-separated' })}
              </div>
              <fieldset
                class="pf-fieldset"
                aria-describedby={errors.fields.primitives ? 'pf-spec-primitives-error' : undefined}
              >
                <legend>Primitives the agent may use as tools</legend>
                {FORM_PRIMITIVES.map((p) => (
                  <label class="pf-check" key={p}>
                    <input
                      type="checkbox"
                      checked={form.primitives[p]}
                      onChange={(e) =>
                        setForm({
                          ...form,
                          primitives: { ...form.primitives, [p]: (e.target as HTMLInputElement).checked },
                        })
                      }
                    />
                    {p}
                  </label>
                ))}
                <FieldError id="pf-spec-primitives-error" messages={errors.fields.primitives} />
              </fieldset>
              <fieldset class="pf-fieldset">
                <legend>Hooks</legend>
                <label class="pf-check">
                  <input
                    type="checkbox"
                    checked={form.auto_memory}
                    onChange={(e) => setForm({ ...form, auto_memory: (e.target as HTMLInputElement).checked })}
                  />
                  auto_memory (keep the conversation in memory)
                </label>
                <label class="pf-check">
                  <input
                    type="checkbox"
                    checked={form.auto_trace}
                    onChange={(e) => setForm({ ...form, auto_trace: (e.target as HTMLInputElement).checked })}
                  />
                  auto_trace (send a trace per run)
                </label>
                <FieldError id="pf-spec-hooks-error" messages={errors.fields.hooks} />
              </fieldset>
              <p class="muted pf-small">
                Tools lists, namespaces and provider overrides are kept as they are; edit them in the JSON view.
              </p>
            </>
          )}
          <div class="pf-form-actions">
            <button type="submit" class="btn primary" disabled={saving}>
              {saving ? 'Saving…' : editing ? 'Save changes' : 'Create agent'}
            </button>
          </div>
        </form>
      </div>
    </section>
  );
}
