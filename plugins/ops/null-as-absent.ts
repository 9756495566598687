/**
 * "An explicit null means the field was not given" for request bodies.
 *
 * Clients generated from pydantic models (the reference platform's Python
 * client among them) send every optional field, unset ones as `null`. Our
 * schemas say `Type.Optional(Type.String())`, which accepts a missing field but
 * not a null one, so those requests failed with 422. Rather than widening every
 * route's schema, the body validator runs this step first: a property whose
 * value is null and whose schema does not accept null is removed, so Ajv sees
 * the field as absent (defaults apply, required fields still fail). A field
 * declared nullable keeps its null. Built once per route schema, on the route's
 * first request, alongside its validator (plugins/ops/lazy-compilers.ts).
 */

type Schema = Record<string, unknown>;
type Strip = (data: unknown) => void;

const isSchema = (s: unknown): s is Schema => !!s && typeof s === 'object' && !Array.isArray(s);
const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Whether a value of null passes `s` (conservative: anything we cannot read is taken to accept it). */
export function acceptsNull(s: unknown): boolean {
  if (s === true || s === undefined) return true;
  if (!isSchema(s)) return false;
  if (s.nullable === true || s.const === null) return true;
  if (Array.isArray(s.enum)) return s.enum.includes(null);
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  if (s.$ref !== undefined) return true;
  const unions = [s.anyOf, s.oneOf].filter(Array.isArray) as unknown[][];
  if (unions.length > 0) return unions.some((branches) => branches.some(acceptsNull));
  if (Array.isArray(s.allOf)) return s.allOf.every(acceptsNull);
  // `{}` (Type.Unknown / Type.Any) accepts anything; a typed schema without null does not.
  return s.type === undefined && s.const === undefined && s.not === undefined;
}

/** The one branch of `Union([X, Null])`-style schemas that is not null, when there is exactly one. */
function soleNonNullBranch(s: Schema): unknown {
  const branches = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
    | unknown[]
    | undefined;
  if (!branches) return undefined;
  const rest = branches.filter((b) => !(isSchema(b) && b.type === 'null'));
  return rest.length === 1 ? rest[0] : undefined;
}

function buildStrip(s: unknown, seen: Set<unknown>): Strip | undefined {
  if (!isSchema(s) || seen.has(s)) return undefined;
  seen.add(s);
  try {
    const inner = soleNonNullBranch(s);
    if (inner !== undefined) return buildStrip(inner, seen);
    if (isSchema(s.items)) {
      const each = buildStrip(s.items, seen);
      return each && ((data) => Array.isArray(data) && data.forEach(each));
    }
    return buildObjectStrip(s, seen);
  } finally {
    seen.delete(s);
  }
}

interface PropertyRule {
  dropNull: boolean;
  inner?: Strip;
}

function ruleFor(s: unknown, seen: Set<unknown>): PropertyRule | undefined {
  const rule = { dropNull: !acceptsNull(s), inner: buildStrip(s, seen) };
  return rule.dropNull || rule.inner ? rule : undefined;
}

function buildObjectStrip(s: Schema, seen: Set<unknown>): Strip | undefined {
  const declared = isSchema(s.properties) ? s.properties : {};
  const named = new Map<string, PropertyRule>();
  for (const [key, ps] of Object.entries(declared)) {
    const rule = ruleFor(ps, seen);
    if (rule) named.set(key, rule);
  }
  const patterns: [RegExp, PropertyRule | undefined][] = isSchema(s.patternProperties)
    ? Object.entries(s.patternProperties).map(([p, ps]) => [new RegExp(p, 'u'), ruleFor(ps, seen)])
    : [];
  // additionalProperties: false refuses the key anyway, so a null there is dropped like any "not given".
  const extra: PropertyRule | undefined =
    s.additionalProperties === false
      ? { dropNull: true }
      : isSchema(s.additionalProperties)
        ? ruleFor(s.additionalProperties, seen)
        : undefined;
  const hasDeclared = Object.keys(declared).length > 0 || patterns.length > 0;
  if (named.size === 0 && !patterns.some(([, r]) => r) && !extra) return undefined;

  const ruleOf = (key: string): PropertyRule | undefined => {
    if (Object.hasOwn(declared, key)) return named.get(key);
    const match = patterns.find(([re]) => re.test(key));
    if (match) return match[1];
    return hasDeclared || extra ? extra : undefined;
  };
  return (data) => {
    if (!isPlainObject(data)) return;
    for (const key of Object.keys(data)) {
      const rule = ruleOf(key);
      if (!rule) continue;
      const value = data[key];
      if (value === null) {
        if (rule.dropNull) delete data[key];
      } else if (rule.inner) {
        rule.inner(value);
      }
    }
  };
}

/** The pre-validation step for a body schema, or undefined when the schema has nothing to drop. */
export function nullStripper(schema: unknown): Strip | undefined {
  return buildStrip(schema, new Set());
}
