import { badRequest } from '../../core/errors.ts';

/** The Cedar engine's Node build, loaded on first use so a process without policies never pays for the wasm. */
export type CedarWasm = typeof import('@cedar-policy/cedar-wasm/nodejs');
let loading: Promise<CedarWasm> | undefined;
export const loadCedar = (): Promise<CedarWasm> => (loading ??= import('@cedar-policy/cedar-wasm/nodejs'));

interface CedarError {
  message: string;
  help: string | null;
  sourceLocations?: Array<{ start: number; end: number }>;
}

/** 1-based line and column of a character offset, the way editors count. */
function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** Cedar's own message, its help and where in the text it points, as one 400. */
export function cedarRejection(code: string, what: string, text: string, errors: CedarError[]): Error {
  const parts = errors.map((e) => {
    const at = e.sourceLocations?.[0];
    const where = at ? ` at line ${position(text, at.start).line}, column ${position(text, at.start).column}` : '';
    return `${e.message}${where}${e.help ? ` (${e.help})` : ''}`;
  });
  return badRequest(code, `${what}: ${parts.join('; ')}`);
}

/** The policies a body holds, each on its own, so decisions can name the stored policy that made them. */
export function splitPolicies(cedar: CedarWasm, body: string): string[] {
  const parts = cedar.policySetTextToParts(body);
  if (parts.type === 'failure')
    throw cedarRejection('SB_ERR_POLICY_INVALID', 'policy_body is not valid Cedar', body, parts.errors);
  if (parts.policy_templates.length)
    throw badRequest(
      'SB_ERR_POLICY_INVALID',
      'policy_body holds a template (?principal or ?resource slots); only static policies are supported',
    );
  if (!parts.policies.length)
    throw badRequest(
      'SB_ERR_POLICY_INVALID',
      'policy_body holds no policy; write at least one permit(...) or forbid(...) statement',
    );
  return parts.policies;
}

/** Parse (and with a schema, validate) a policy body; throws the 400 before anything is stored. */
export function checkPolicyBody(cedar: CedarWasm, body: string, schema: string | undefined): void {
  const parsed = cedar.checkParsePolicySet({ staticPolicies: body });
  if (parsed.type === 'failure')
    throw cedarRejection('SB_ERR_POLICY_INVALID', 'policy_body is not valid Cedar', body, parsed.errors);
  splitPolicies(cedar, body);
  if (schema === undefined) return;
  const v = cedar.validate({ schema, policies: { staticPolicies: body }, validationSettings: { mode: 'strict' } });
  if (v.type === 'failure')
    throw cedarRejection('SB_ERR_POLICY_SCHEMA', 'the configured Cedar schema could not be used', body, v.errors);
  if (v.validationErrors.length)
    throw cedarRejection(
      'SB_ERR_POLICY_SCHEMA_MISMATCH',
      'policy_body does not validate against the Cedar schema',
      body,
      v.validationErrors.map((e) => e.error),
    );
}

/** `Type::"id"` as Cedar's JSON uid; anything else is a `Resource` named by the whole text. */
export function entityUid(text: string): { type: string; id: string } {
  const m = /^([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)::"((?:[^"\\]|\\.)*)"$/.exec(text);
  if (!m) return { type: 'Resource', id: text };
  return { type: m[1]!, id: m[2]!.replace(/\\(.)/g, '$1') };
}

type CedarJson = boolean | number | string | CedarJson[] | { [k: string]: CedarJson };

/**
 * Request context as Cedar values: Cedar has no floats or nulls, so fractions
 * become strings and nulls are left out (a policy tests them with `has`).
 */
export function cedarValue(v: unknown): CedarJson | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : String(v);
  if (Array.isArray(v)) return v.map(cedarValue).filter((x): x is CedarJson => x !== undefined);
  if (typeof v === 'object') {
    const out: Record<string, CedarJson> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const c = cedarValue(x);
      if (c !== undefined) out[k] = c;
    }
    return out;
  }
  return String(v);
}
