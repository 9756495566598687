/**
 * Request shapes of the reference platform client for memory, turned into ours
 * before validation (issue 14). The reference sends a fork's name as
 * `branch_name`, wraps an added strategy as `{"strategy": {...}}`, and its
 * strategies are free-form dicts: `{"type": "semantic"}` without name,
 * namespaces or config, or a cloud-style `{"semanticMemoryStrategy": {name,
 * namespaces, ...}}`. Our shapes stay the documented ones; these only fill them.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** `semanticMemoryStrategy` → `semantic`, `userPreferenceMemoryStrategy` → `user_preference`. */
function typeFromWrapperKey(key: string): string | undefined {
  const m = /^([a-z][A-Za-z]*)MemoryStrategy$/.exec(key);
  return m ? m[1].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : undefined;
}

/** A reference strategy dict in our shape; anything not ours goes under `config`. Non-objects pass through for the validator to refuse. */
export function strategyFromReference(raw: unknown): unknown {
  if (!isObject(raw)) return raw;
  let s: Json = raw;
  const keys = Object.keys(raw);
  const wrapped = keys.length === 1 ? typeFromWrapperKey(keys[0]) : undefined;
  if (wrapped && isObject(raw[keys[0]])) s = { type: wrapped, ...(raw[keys[0]] as Json) };
  if (typeof s.type !== 'string') return s;
  const { name, type, namespaces, config, strategy_id: _ignored, ...rest } = s;
  return {
    name: typeof name === 'string' && name.length > 0 ? name : type,
    type,
    namespaces: namespaces ?? [],
    config: config ?? (Object.keys(rest).length > 0 ? rest : {}),
  };
}

/** preValidation for POST .../strategies: unwraps `{"strategy": {...}}`. */
export async function addStrategyBody(request: { body: unknown }): Promise<void> {
  const body = request.body;
  if (isObject(body) && Object.keys(body).length === 1 && isObject(body.strategy))
    request.body = strategyFromReference(body.strategy);
  else request.body = strategyFromReference(body);
}

/** preValidation for POST /resources: each strategy in the reference's shape. */
export async function createResourceBody(request: { body: unknown }): Promise<void> {
  const body = request.body;
  if (isObject(body) && Array.isArray(body.strategies)) body.strategies = body.strategies.map(strategyFromReference);
}

/** preValidation for a fork: `branch_name` (the reference's field) is taken as `name` when that is not given. */
export async function branchBody(request: { body: unknown }): Promise<void> {
  const body = request.body;
  if (isObject(body) && body.name == null && typeof body.branch_name === 'string') {
    body.name = body.branch_name;
    delete body.branch_name;
  }
}
