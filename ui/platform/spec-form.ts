/**
 * The agent spec editor's model: the form edits the common fields, the JSON view edits everything, and both are
 * views of one spec object. Errors from the API (a 422 `detail` list of `{loc, msg}`, or a string) are placed at
 * the field they name, the rest go on top of the form.
 */

/** Primitives an agent can enable from the form (the tool catalog's groups, docs/agents.md). */
export const FORM_PRIMITIVES = [
  'memory',
  'code_interpreter',
  'browser',
  'tools',
  'agent_management',
  'agents',
] as const;

/** Fields the server owns: never sent back in a create or update. */
const SERVER_FIELDS = ['owner_id', 'created_at', 'updated_at'] as const;

export interface SpecForm {
  name: string;
  model: string;
  description: string;
  system_prompt: string;
  max_turns: string;
  temperature: string;
  /** Comma-separated: `*`, group names, or empty for the owner only. */
  shared_with: string;
  primitives: Record<string, boolean>;
  auto_memory: boolean;
  auto_trace: boolean;
}

export type Spec = Record<string, unknown>;

export function newSpec(): Spec {
  return {
    name: '',
    model: '',
    description: '',
    system_prompt: 'You are a helpful assistant.',
    max_turns: 20,
    temperature: 1,
    primitives: {},
    hooks: { auto_memory: true, auto_trace: true },
    shared_with: [],
  };
}

export function formOf(spec: Spec): SpecForm {
  const prims = (spec.primitives ?? {}) as Record<string, { enabled?: boolean }>;
  const hooks = (spec.hooks ?? {}) as { auto_memory?: boolean; auto_trace?: boolean };
  return {
    name: String(spec.name ?? ''),
    model: String(spec.model ?? ''),
    description: String(spec.description ?? ''),
    system_prompt: String(spec.system_prompt ?? ''),
    max_turns: spec.max_turns === undefined ? '' : String(spec.max_turns),
    temperature: spec.temperature === undefined ? '' : String(spec.temperature),
    shared_with: Array.isArray(spec.shared_with) ? spec.shared_with.join(', ') : '',
    primitives: Object.fromEntries(FORM_PRIMITIVES.map((p) => [p, prims[p]?.enabled === true])),
    auto_memory: hooks.auto_memory !== false,
    auto_trace: hooks.auto_trace !== false,
  };
}

/** A number field as typed: kept as text when it is not a number, so the API names the mistake at the field. */
const num = (s: string): number | string | undefined => {
  const v = s.trim();
  if (v === '') return undefined;
  return Number.isFinite(Number(v)) ? Number(v) : v;
};

/** The form applied over `base`, keeping what the form does not show (tools lists, namespaces, overrides...). */
export function specOf(form: SpecForm, base: Spec): Spec {
  const prims = { ...((base.primitives ?? {}) as Record<string, Record<string, unknown>>) };
  for (const p of FORM_PRIMITIVES) {
    if (form.primitives[p]) prims[p] = { ...(prims[p] ?? {}), enabled: true };
    else if (prims[p]) prims[p] = { ...prims[p], enabled: false };
  }
  const out: Spec = {
    ...base,
    name: form.name.trim(),
    model: form.model.trim(),
    description: form.description,
    system_prompt: form.system_prompt,
    primitives: prims,
    hooks: { ...((base.hooks ?? {}) as object), auto_memory: form.auto_memory, auto_trace: form.auto_trace },
    shared_with: form.shared_with
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  };
  const maxTurns = num(form.max_turns);
  const temperature = num(form.temperature);
  if (maxTurns === undefined) delete out.max_turns;
  else out.max_turns = maxTurns;
  if (temperature === undefined) delete out.temperature;
  else out.temperature = temperature;
  return out;
}

/** The body of POST /agents (create) or PUT /agents/{name} (update: the name is in the URL and cannot change). */
export function requestBody(spec: Spec, mode: 'create' | 'update'): Spec {
  const body: Spec = { ...spec };
  for (const f of SERVER_FIELDS) delete body[f];
  if (mode === 'update') delete body.name;
  return body;
}

/** The JSON view's text parsed; a message saying where it is broken otherwise. */
export function parseSpecJson(text: string): { spec: Spec } | { error: string } {
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'The spec must be a JSON object ({...}).' };
    return { spec: v as Spec };
  } catch (err) {
    return { error: `The JSON is not valid: ${(err as Error).message}` };
  }
}

export interface PlacedErrors {
  /** Messages by top-level field name (`model`, `max_turns`, `primitives`...). */
  fields: Record<string, string[]>;
  /** Messages that name no field of the form. */
  top: string[];
}

/** An API error's `detail` placed at the fields it names. */
export function placeErrors(detail: unknown, fieldNames: readonly string[]): PlacedErrors {
  const out: PlacedErrors = { fields: {}, top: [] };
  if (!Array.isArray(detail)) {
    if (detail !== undefined && detail !== null && detail !== '') out.top.push(String(detail));
    return out;
  }
  for (const item of detail as Array<{ loc?: unknown[]; msg?: string }>) {
    const loc = Array.isArray(item?.loc) ? item.loc : [];
    const path = loc[0] === 'body' ? loc.slice(1) : loc;
    const field = typeof path[0] === 'string' ? path[0] : undefined;
    const rest = path.slice(1).join('.');
    const msg = `${item?.msg ?? 'invalid'}${rest ? ` (at ${rest})` : ''}`;
    if (field && fieldNames.includes(field)) (out.fields[field] ??= []).push(msg);
    else out.top.push(field ? `${path.join('.')}: ${msg}` : msg);
  }
  return out;
}

export const FORM_FIELDS = [
  'name',
  'model',
  'description',
  'system_prompt',
  'max_turns',
  'temperature',
  'shared_with',
  'primitives',
  'hooks',
] as const;
