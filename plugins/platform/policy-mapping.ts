import type { FastifyRequest } from 'fastify';
import type { AuthorizationRequest } from '../../core/primitives/policy.ts';

/**
 * How an /api/v1 request reads as a Cedar question (published at
 * GET /api/v1/policy/schema and in docs/policy.md). Routes are named by their
 * template, so the mapping is fixed per route and costs a lookup per request.
 */

/** Operations whose name the method and path alone would get wrong. */
const NAMED: Record<string, string> = {
  'POST /memory/:namespace': 'memory:store',
  'GET /memory/:namespace/:key': 'memory:retrieve',
  'GET /memory/:namespace': 'memory:list',
  'POST /llm/completions': 'llm:complete',
  'POST /llm/completions/stream': 'llm:complete',
};

/** The entity type of each path parameter (`:name` depends on the primitive). */
const PARAM_TYPES: Array<[param: string, type: string]> = [
  ['session_id', 'Session'],
  ['namespace', 'Namespace'],
  ['memory_id', 'Memory'],
  ['engine_id', 'Engine'],
  ['trace_id', 'Trace'],
  ['evaluator_id', 'Evaluator'],
  ['actor_id', 'Actor'],
  ['name', ''],
  ['id', ''],
];
const NAME_TYPES: Record<string, string> = {
  agents: 'Agent',
  tools: 'Tool',
  teams: 'Team',
  credentials: 'Credential',
  identity: 'Identity',
};

export interface RouteAction {
  primitive: string;
  action: string;
}

/** `memory:store`, `tools:invoke`, `agents:chat`, ... for a route template under /api/v1. */
export function actionOf(method: string, url: string): RouteAction {
  const path = url.replace(/^\/api\/v1/, '');
  const segments = path.split('/').filter(Boolean);
  const primitive = segments[0] ?? 'root';
  const named = NAMED[`${method} ${path}`];
  if (named) return { primitive, action: named };
  const last = segments.at(-1) ?? '';
  const afterParam =
    segments.length > 2 && !last.startsWith(':') && segments.slice(1, -1).some((s) => s.startsWith(':'));
  let op: string;
  if (afterParam || (method === 'POST' && segments.length === 2 && !last.startsWith(':'))) op = last;
  else if (method === 'GET') op = last.startsWith(':') ? 'get' : segments.length > 1 ? last : 'list';
  else if (method === 'DELETE') op = 'delete';
  else if (method === 'PUT' || method === 'PATCH') op = 'update';
  else op = 'create';
  return { primitive, action: `${primitive}:${op}` };
}

const quote = (s: string) => JSON.stringify(s);

/** The entity a request touches: the most specific path parameter, the model for LLM calls, else the primitive. */
export function resourceOf(primitive: string, params: Record<string, string> | undefined, body: unknown): string {
  if (params) {
    for (const [param, type] of PARAM_TYPES) {
      const v = params[param];
      if (v === undefined) continue;
      return `${type || NAME_TYPES[primitive] || 'Resource'}::${quote(type ? v : NAME_TYPES[primitive] ? v : `${primitive}/${v}`)}`;
    }
  }
  const model = (body as { model?: unknown } | undefined)?.model;
  if (primitive === 'llm' && typeof model === 'string') return `Model::${quote(model)}`;
  return `Primitive::${quote(primitive)}`;
}

/** The whole question for one request, given its principal. */
export function questionOf(request: FastifyRequest, engineId: string): AuthorizationRequest & { actionName: string } {
  const p = request.principal!;
  const { primitive, action } = actionOf(request.method, request.routeOptions.url ?? request.url);
  const now = new Date();
  const agent = request.headers['x-agent-id'];
  const provider = request.headers[`x-provider-${primitive}`] ?? request.headers['x-provider'];
  const context: Record<string, unknown> = {
    ip: request.ip,
    time: Math.floor(now.getTime() / 1000),
    hour_utc: now.getUTCHours(),
    provider: typeof provider === 'string' ? provider : 'default',
  };
  if (typeof agent === 'string') context.agent = { __entity: { type: 'Agent', id: agent } };
  // Cast, not typed: this runs in a preHandler hook for every /api/v1 route, each with its own body and
  // params schema, so the request is the untyped FastifyRequest; the shapes are checked before use.
  const body = request.body as { params?: unknown } | undefined;
  if (action === 'tools:invoke' && body && typeof body === 'object' && body.params !== undefined)
    context.arguments = body.params;
  return {
    engine_id: engineId,
    principal: `${p.type === 'service' ? 'Service' : 'User'}::${quote(p.id)}`,
    principal_parents: p.groups.map((g) => `Group::${quote(g)}`),
    principal_attrs: { is_admin: p.is_admin, type: p.type },
    action: `Action::${quote(action)}`,
    actionName: action,
    resource: resourceOf(primitive, request.params as Record<string, string> | undefined, request.body),
    context,
  };
}
