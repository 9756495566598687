import { Type } from '@sinclair/typebox';
import { badRequest, unprocessable } from '../../../core/errors.ts';
import { LIFECYCLE, type LifecycleStatus, type ServerRecord, type ToolDef } from './records.ts';

/**
 * Server fields as they arrive from forms (all strings) or JSON (typed), and
 * their normalisation. Forms send booleans as true/false/on and JSON fields as
 * JSON text; both are accepted everywhere.
 */

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
// Unknown, not a union: with coercion on and allErrors, Ajv tries every branch of a
// union and coerces in place (a form's JSON text became a one-item array, JSON ["sse"] became "sse").
const JsonValue = Type.Unknown({ description: 'JSON value, or JSON text (forms)' });

export const ServerBody = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'Display name (also accepted as server_name)' })),
    server_name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    path: Type.Optional(Type.String({ description: 'Starts with /; identifies the server' })),
    proxy_pass_url: Type.Optional(Type.String({ description: 'Backend URL (http or https)' })),
    tags: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'Comma-separated' })),
    num_tools: Type.Optional(Scalar),
    num_stars: Type.Optional(Scalar),
    is_python: Type.Optional(Scalar),
    license: Type.Optional(Type.String()),
    metadata: Type.Optional(JsonValue),
    auth_scheme: Type.Optional(Type.String({ description: 'none | bearer | api_key' })),
    auth_credential: Type.Optional(
      Type.String({ description: 'Write-only; encrypted before storage; never returned' }),
    ),
    auth_header_name: Type.Optional(Type.String()),
    tool_list_json: Type.Optional(JsonValue),
    supported_transports: Type.Optional(
      Type.Unknown({
        description: 'streamable-http, sse, ...: one value, comma-separated text, a JSON list, or repeated form keys',
      }),
    ),
    set_as_default: Type.Optional(Scalar),
    headers: Type.Optional(JsonValue),
    mcp_endpoint: Type.Optional(Type.String()),
    sse_endpoint: Type.Optional(Type.String()),
    version: Type.Optional(Type.String()),
    status: Type.Optional(Type.String({ description: 'active | deprecated | draft | beta' })),
    provider_organization: Type.Optional(Type.String()),
    provider_url: Type.Optional(Type.String()),
    overwrite: Type.Optional(Scalar),
    auth_provider: Type.Optional(Type.String()),
    auth_type: Type.Optional(Type.String()),
    csrf_token: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type ServerBodyT = Record<string, unknown>;

export function parseBool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (['true', 'on', '1', 'yes'].includes(s)) return true;
  if (['false', 'off', '0', 'no'].includes(s)) return false;
  throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', `${field} must be true or false, not '${String(v)}'`);
}

function parseNumber(v: unknown, field: string, integer: boolean): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    throw badRequest(
      'SB_ERR_REGISTRY_INVALID_FIELD',
      `${field} must be a non-negative ${integer ? 'integer' : 'number'}, not '${String(v)}'`,
    );
  }
  return n;
}

function parseJson(v: unknown, field: string): unknown {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', `${field} must be valid JSON`);
  }
}

const TRANSPORT = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;

/**
 * supported_transports as clients send it: the reference CLI's configs give a
 * single value (`streamable-http`) or comma-separated text in a form field,
 * others a JSON list as text or repeated form keys, JSON bodies a list.
 */
export function parseTransports(v: unknown): string[] | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const items = (Array.isArray(v) ? v : [v]).flatMap((item): unknown[] => {
    if (typeof item !== 'string') return [item];
    const text = item.trim();
    if (!text.startsWith('[')) return text.split(',');
    const parsed = parseJson(text, 'supported_transports');
    return Array.isArray(parsed) ? parsed : [parsed];
  });
  const out: string[] = [];
  for (const item of items) {
    const name = typeof item === 'string' ? item.trim() : undefined;
    if (name === '') continue;
    if (name === undefined || !TRANSPORT.test(name)) {
      throw badRequest(
        'SB_ERR_REGISTRY_INVALID_FIELD',
        `supported_transports holds transport names such as streamable-http or sse (one, comma-separated, or a JSON list), not ${JSON.stringify(item)}`,
      );
    }
    if (!out.includes(name)) out.push(name);
  }
  if (out.length === 0)
    throw badRequest(
      'SB_ERR_REGISTRY_INVALID_FIELD',
      'supported_transports names no transport; send e.g. streamable-http',
    );
  return out;
}

export function parseTags(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = (Array.isArray(v) ? v.map(String) : [String(v)]).flatMap((x) => x.split(','));
  return [...new Set(list.map((t) => t.trim()).filter(Boolean))];
}

/** `/a/b/` -> `/a/b`; refuses what could escape or confuse routing. */
export function normalizeServerPath(raw: string): string {
  const p = raw.trim();
  if (!p.startsWith('/')) throw badRequest('SB_ERR_REGISTRY_INVALID_PATH', `path must start with '/': got '${raw}'`);
  const trimmed = `/${p.replace(/^\/+|\/+$/g, '')}`;
  if (trimmed === '/') throw badRequest('SB_ERR_REGISTRY_INVALID_PATH', 'path must name the server, e.g. /weather');
  // eslint-disable-next-line no-control-regex
  if (/\.\.|\/\/|[\s%?#\\\u0000-\u001f]/.test(trimmed)) {
    throw badRequest(
      'SB_ERR_REGISTRY_INVALID_PATH',
      `path '${raw}' may only hold letters, digits, '-', '_', '.', '/' (no '..', '//', spaces, '%', '?', '#')`,
    );
  }
  return trimmed;
}

function httpUrl(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  let u: URL;
  try {
    u = new URL(String(v).trim());
  } catch {
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', `${field} must be an absolute http(s) URL, not '${String(v)}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw badRequest('SB_ERR_REGISTRY_INVALID_URL', `${field} must use http or https`);
  return u.toString();
}

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return String(v).trim();
}

function tools(v: unknown): ToolDef[] | undefined {
  const parsed = parseJson(v, 'tool_list_json');
  if (parsed === undefined) return undefined;
  if (
    !Array.isArray(parsed) ||
    parsed.some((t) => !t || typeof t !== 'object' || typeof (t as ToolDef).name !== 'string')
  ) {
    throw badRequest(
      'SB_ERR_REGISTRY_INVALID_FIELD',
      'tool_list_json must be a JSON array of {name, description, inputSchema}',
    );
  }
  return parsed.map((t: ToolDef) => ({
    name: t.name,
    description: t.description ?? '',
    inputSchema: t.inputSchema ?? (t as { input_schema?: Record<string, unknown> }).input_schema ?? {},
  }));
}

export type ServerFields = Partial<
  Omit<ServerRecord, 'auth_scheme' | 'auth_header_name' | 'auth_credential_ciphertext' | 'auth_credential_encrypted'>
>;

/**
 * The descriptive fields present in `body` (credentials are handled apart).
 * With `required`, the spec's required registration fields must be there (422 names the missing ones).
 */
export function parseServerFields(
  body: ServerBodyT,
  required: Array<'name' | 'description' | 'path' | 'proxy_pass_url'> = [],
): ServerFields {
  const name = str(body.name) || str(body.server_name);
  const missing = required.filter((f) => (f === 'name' ? !name : !str(body[f])));
  if (missing.length) {
    throw unprocessable(
      'SB_ERR_VALIDATION',
      missing.map((f) => ({ loc: ['body', f], msg: `${f} is required`, type: 'missing' })),
    );
  }
  const out: ServerFields = {};
  if (name) out.server_name = name;
  if (body.description !== undefined) out.description = str(body.description) ?? '';
  if (str(body.path)) out.path = normalizeServerPath(String(body.path));
  const url = httpUrl(body.proxy_pass_url, 'proxy_pass_url');
  if (url) out.proxy_pass_url = url;
  const tags = parseTags(body.tags);
  if (tags) out.tags = tags;
  const nt = parseNumber(body.num_tools, 'num_tools', true);
  if (nt !== undefined) out.num_tools = nt;
  const ns = parseNumber(body.num_stars, 'num_stars', false);
  if (ns !== undefined) out.num_stars = ns;
  const py = parseBool(body.is_python, 'is_python');
  if (py !== undefined) out.is_python = py;
  if (body.license !== undefined) out.license = str(body.license) ?? '';
  const md = parseJson(body.metadata, 'metadata');
  if (md !== undefined) {
    if (typeof md !== 'object' || Array.isArray(md) || md === null)
      throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'metadata must be a JSON object');
    out.metadata = md as Record<string, unknown>;
  }
  const tl = tools(body.tool_list_json);
  if (tl) out.tool_list_json = tl;
  const st = parseTransports(body.supported_transports);
  if (st !== undefined) out.supported_transports = st;
  const hd = parseJson(body.headers, 'headers');
  if (hd !== undefined) {
    if (
      typeof hd !== 'object' ||
      Array.isArray(hd) ||
      hd === null ||
      Object.values(hd).some((x) => typeof x !== 'string')
    ) {
      throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'headers must be a JSON object of string values');
    }
    out.headers = hd as Record<string, string>;
  }
  const mcp = httpUrl(body.mcp_endpoint, 'mcp_endpoint');
  if (mcp) out.mcp_endpoint = mcp;
  const sse = httpUrl(body.sse_endpoint, 'sse_endpoint');
  if (sse) out.sse_endpoint = sse;
  if (str(body.version)) out.version = str(body.version);
  if (str(body.status)) {
    const s = str(body.status)!.toLowerCase();
    if (!LIFECYCLE.includes(s as LifecycleStatus))
      throw badRequest(
        'SB_ERR_REGISTRY_INVALID_FIELD',
        `status must be one of ${LIFECYCLE.join(', ')}, not '${body.status}'`,
      );
    out.status = s as LifecycleStatus;
  }
  if (body.provider_organization !== undefined) out.provider_organization = str(body.provider_organization);
  const pu = httpUrl(body.provider_url, 'provider_url');
  if (pu) out.provider_url = pu;
  if (str(body.auth_provider)) out.auth_provider = str(body.auth_provider);
  if (str(body.auth_type)) out.auth_type = str(body.auth_type);
  return out;
}
