import { PRIMITIVES, providerHeader, type PrimitiveName } from '../../core/primitives.ts';
import { SECURITY_SCHEMES, securityFor } from './openapi-security.ts';
import { TAGS, canonicalTag } from './openapi-tags.ts';

/**
 * Finishes the document @fastify/swagger generates from the route schemas:
 * what follows from where a route lives (security, operationId, tag, the
 * error responses every route can give, the routing headers of the platform)
 * is added here, once, instead of on every route.
 */

type Json = Record<string, unknown>;
interface Operation extends Json {
  tags?: string[];
  operationId?: string;
  parameters?: Array<{ in: string; name: string } & Json>;
  requestBody?: unknown;
  responses?: Record<string, Json>;
  security?: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ERROR_REF = '#/components/schemas/Error';

/** The one error body of the service (plugins/errors.ts). */
const ERROR_SCHEMA = {
  type: 'object',
  required: ['detail', 'code'],
  properties: {
    detail: {
      description: 'What went wrong and what to fix: a sentence, or one item per invalid field for validation errors.',
      anyOf: [
        { type: 'string' },
        {
          type: 'array',
          items: {
            type: 'object',
            required: ['loc', 'msg', 'type'],
            properties: {
              loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
              msg: { type: 'string' },
              type: { type: 'string' },
            },
          },
        },
      ],
    },
    code: { type: 'string', description: 'Stable machine-readable code, SB_ERR_<AREA>_<WHAT>.' },
  },
};

/** Reusable responses, added to an operation where its shape says it can answer them. */
const RESPONSES: Record<string, { status: string; description: string }> = {
  Malformed: { status: '400', description: 'The body is not valid JSON, or the request is otherwise malformed.' },
  Unauthenticated: { status: '401', description: 'Credentials are missing, expired or invalid.' },
  Forbidden: { status: '403', description: 'The credentials do not allow this (scope, group or CSRF token missing).' },
  NotFound: { status: '404', description: 'Nothing exists at this path.' },
  Invalid: {
    status: '422',
    description: 'The request does not match the schema; detail lists each problem with its location.',
  },
  Internal: { status: '500', description: 'Unexpected server error; the log has the cause.' },
  Unavailable: { status: '503', description: 'A dependency (provider, store) is down; detail names it.' },
};

const errorContent = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: ERROR_REF } } },
});

/** `/api/v1/code-interpreter/...` -> the primitives whose X-Provider-* header routes the call. */
function routedPrimitives(path: string): PrimitiveName[] {
  const area = path.split('/')[3]?.replace(/-/g, '_');
  if (area === 'agents' || area === 'teams') return [...PRIMITIVES];
  return (PRIMITIVES as readonly string[]).includes(area ?? '') ? [area as PrimitiveName] : [];
}

const headerName = (primitive: PrimitiveName) =>
  providerHeader(primitive).replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase());

/** The routing and pass-through credential headers of spec 5.5, on the platform operations they affect. */
function platformHeaders(path: string): Json[] {
  const primitives = routedPrimitives(path);
  if (!primitives.length) return [];
  return [
    {
      in: 'header',
      name: 'X-Provider',
      required: false,
      description:
        'Provider instance for every primitive of this call that has an instance of that name (GET /api/v1/providers lists them).',
      schema: { type: 'string' },
    },
    ...primitives.map((p) => ({
      in: 'header',
      name: headerName(p),
      required: false,
      description: `Provider instance for the ${p} primitive; wins over X-Provider.`,
      schema: { type: 'string' },
    })),
    {
      in: 'header',
      name: 'X-Cred-{Service}-{Key}',
      required: false,
      description:
        'Pattern, not a literal header: pass-through credentials for the provider, e.g. `X-Cred-Openai-Api-Key`. ' +
        'Used for this call only, never stored or logged. Send them with curl or a client; this page does not send a pattern header.',
      schema: { type: 'string' },
    },
  ];
}

/** `post /api/v1/memory/{namespace}/search` -> `postApiV1MemoryByNamespaceSearch`: stable while the route is. */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .map((seg, i, all) => {
      if (seg === '') return i === all.length - 1 && i > 1 ? 'Index' : '';
      const param = /^\{(.+)\}$/.exec(seg);
      const parts = (param ? param[1] : seg).split(/[^A-Za-z0-9]+/).filter(Boolean);
      const pascal = parts.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
      return param ? `By${pascal}` : pascal;
    })
    .join('');
  return method.toLowerCase() + (words || 'Root');
}

/** An error response the route declared with the shared body: pointed at the one component. */
function isErrorBody(schema: unknown): boolean {
  const s = schema as { type?: string; required?: string[] } | undefined;
  return (
    s?.type === 'object' && Array.isArray(s.required) && s.required.includes('detail') && s.required.includes('code')
  );
}

function finishOperation(path: string, method: string, source: Operation, taken: Set<string>): Operation {
  const op: Operation = {
    ...source,
    responses: { ...(source.responses ?? {}) },
    parameters: [...(source.parameters ?? [])],
  };
  const responses: Record<string, Json> = op.responses ?? {};
  const parameters: NonNullable<Operation['parameters']> = op.parameters ?? [];
  const platform = path === '/api/v1' || path.startsWith('/api/v1/');

  let id = op.operationId ?? operationIdOf(method, path);
  // Two routes that differ only in characters the id drops would collide; the suffix keeps both callable.
  for (let n = 2; taken.has(id); n++) id = `${operationIdOf(method, path)}${n}`;
  taken.add(id);
  op.operationId = id;

  op.tags = [...new Set((op.tags?.length ? op.tags : [platform ? 'platform' : 'registry']).map(canonicalTag))];
  op.security = securityFor(path);

  for (const [status, res] of Object.entries(responses)) {
    if (Number(status) < 400) continue;
    const content = res.content as Record<string, { schema?: unknown }> | undefined;
    const json = content?.['application/json'];
    if (!json) continue;
    const any = (json.schema as { anyOf?: unknown[] } | undefined)?.anyOf;
    // A union (e.g. the login's JSON error or HTML page) keeps its other members.
    const schema = isErrorBody(json.schema)
      ? { $ref: ERROR_REF }
      : any
        ? { ...(json.schema as Json), anyOf: any.map((m) => (isErrorBody(m) ? { $ref: ERROR_REF } : m)) }
        : undefined;
    if (schema) responses[status] = { ...res, content: { ...content, 'application/json': { ...json, schema } } };
  }

  const takesInput = op.requestBody !== undefined || parameters.some((p) => p.in !== 'header');
  const add = (name: keyof typeof RESPONSES, when: boolean) => {
    if (when && !responses[RESPONSES[name].status])
      responses[RESPONSES[name].status] = { $ref: `#/components/responses/${name}` };
  };
  const secured = (op.security as unknown[]).length > 0;
  add('Malformed', platform && op.requestBody !== undefined);
  add('Unauthenticated', secured);
  add('Forbidden', secured);
  add('NotFound', path.includes('{'));
  add('Invalid', takesInput);
  add('Internal', true);
  add('Unavailable', platform);

  const have = new Set(parameters.map((p) => `${p.in}:${p.name.toLowerCase()}`));
  for (const h of platform ? platformHeaders(path) : []) {
    if (!have.has(`header:${String(h.name).toLowerCase()}`)) parameters.push(h as { in: string; name: string } & Json);
  }
  if (!parameters.length) delete op.parameters;
  return op;
}

/** The transformObject of @fastify/swagger: returns a new document, the generated one is left as it was. */
export function finishDocument(generated: Json): Json {
  const paths = (generated.paths ?? {}) as Record<string, Record<string, Operation>>;
  const taken = new Set<string>();
  const outPaths: Record<string, Json> = {};
  // Sorted, so an id suffix (when ever needed) does not depend on route registration order.
  for (const path of Object.keys(paths).sort()) {
    const item: Json = { ...paths[path] };
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (op) item[method] = finishOperation(path, method, op, taken);
    }
    outPaths[path] = item;
  }
  const used = new Set(
    Object.values(outPaths).flatMap((item) => METHODS.flatMap((m) => (item[m] as Operation | undefined)?.tags ?? [])),
  );
  const components = (generated.components ?? {}) as Json;
  return {
    ...generated,
    servers: [{ url: '/', description: 'This Switchboard (the origin serving this document)' }],
    tags: [...used].sort().map((name) => ({ name, description: TAGS[name] ?? `Operations of ${name}.` })),
    paths: outPaths,
    components: {
      ...components,
      securitySchemes: SECURITY_SCHEMES,
      schemas: { ...((components.schemas as Json | undefined) ?? {}), Error: ERROR_SCHEMA },
      responses: Object.fromEntries(Object.entries(RESPONSES).map(([name, r]) => [name, errorContent(r.description)])),
    },
  };
}
