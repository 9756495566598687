import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { badRequest, forbidden, unprocessable } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { isAdmin } from './access.ts';
import type { AgentRecord, AgentSkill, SecurityScheme, TrustLevel } from './records.ts';
import { parseTags } from './server-input.ts';
import { TRUST_WEIGHT } from './agents-repo.ts';

/** A2A agent cards as registered (spec 2.2): snake_case and the A2A camelCase spellings are both accepted. */

const SkillIn = Type.Union([
  Type.String(),
  Type.Object(
    {
      name: Type.String({ minLength: 1 }),
      id: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      tags: Type.Optional(Type.Array(Type.String())),
      input_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
    },
    { additionalProperties: true },
  ),
]);

export const AgentBody = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    path: Type.Optional(Type.String({ description: 'Starts with /; defaults to /<name as a slug>' })),
    url: Type.Optional(Type.String({ description: 'Agent endpoint (http or https)' })),
    version: Type.Optional(Type.String()),
    provider: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Object(
          { organization: Type.Optional(Type.String()), url: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
      ]),
    ),
    protocol_version: Type.Optional(Type.String()),
    security_schemes: Type.Optional(
      Type.Record(Type.String(), Type.Object({ type: Type.String() }, { additionalProperties: true })),
    ),
    securitySchemes: Type.Optional(
      Type.Record(Type.String(), Type.Object({ type: Type.String() }, { additionalProperties: true })),
    ),
    skills: Type.Optional(Type.Array(SkillIn)),
    tags: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    visibility: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('internal')])),
    license: Type.Optional(Type.String()),
    trust_level: Type.Optional(
      Type.Union([
        Type.Literal('unverified'),
        Type.Literal('community'),
        Type.Literal('verified'),
        Type.Literal('trusted'),
      ]),
    ),
    is_enabled: Type.Optional(Type.Boolean({ description: 'Ignored: enabled state changes only through toggle' })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Extension data; unknown card fields are kept here too',
      }),
    ),
  },
  { additionalProperties: true },
);
export type AgentBodyT = Record<string, unknown> & { name: string };

const KNOWN = new Set(Object.keys(AgentBody.properties));

/** A2A camelCase spellings of client-settable fields, taken as their spec names. */
const CAMEL_ALIASES: Record<string, string> = {
  protocolVersion: 'protocol_version',
  securitySchemes: 'security_schemes',
};

/**
 * Fields the registry owns, in every spelling a client might send. They are
 * never taken from a card nor echoed from one: a client reading camelCase must
 * not find a self-asserted `trustLevel` beside the server's `trust_level`.
 */
const SERVER_CONTROLLED = new Set([
  'id',
  'trust_level',
  'trustLevel',
  'is_enabled',
  'isEnabled',
  'enabled',
  'num_skills',
  'numSkills',
  'registered_by',
  'registeredBy',
  'registered_at',
  'registeredAt',
  'updated_at',
  'updatedAt',
  'health_status',
  'healthStatus',
  'security_status',
  'securityStatus',
  'rating',
  'num_stars',
  'numStars',
]);

/** Unknown card fields (and an explicit `metadata` object): kept, but only under `metadata` in answers. */
function extensionData(body: Record<string, unknown>): Record<string, unknown> {
  const given =
    body.metadata && typeof body.metadata === 'object' && !Array.isArray(body.metadata)
      ? (body.metadata as Record<string, unknown>)
      : {};
  const unknown = Object.entries(body).filter(
    ([k]) => k !== 'metadata' && !KNOWN.has(k) && !Object.hasOwn(CAMEL_ALIASES, k) && !SERVER_CONTROLLED.has(k),
  );
  return withoutServerFields({ ...given, ...Object.fromEntries(unknown) });
}

function withoutServerFields(extra: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(extra).filter(([k]) => !SERVER_CONTROLLED.has(k)));
}
const RESERVED = new Set(['register', 'discover']);

export function normalizeAgentPath(raw: string): string {
  const p = `/${raw.trim().replace(/^\/+|\/+$/g, '')}`;
  if (!/^\/[A-Za-z0-9._-]+$/.test(p) || p.includes('..')) {
    throw badRequest(
      'SB_ERR_REGISTRY_INVALID_PATH',
      `Agent path must be one segment of letters, digits, '.', '_' or '-', e.g. /code-reviewer (got '${raw}')`,
    );
  }
  if (RESERVED.has(p.slice(1))) throw badRequest('SB_ERR_REGISTRY_INVALID_PATH', `${p} is reserved by the agents API`);
  return p;
}

function slug(name: string): string {
  return (
    name
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'agent'
  );
}

function skills(raw: unknown): AgentSkill[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((s) => {
    if (typeof s === 'string') return { name: s };
    const o = s as Record<string, unknown>;
    return {
      name: String(o.name),
      id: typeof o.id === 'string' ? o.id : undefined,
      description: typeof o.description === 'string' ? o.description : undefined,
      tags: Array.isArray(o.tags) ? o.tags.map(String) : undefined,
      input_schema: (o.input_schema ?? o.inputSchema) as Record<string, unknown> | undefined,
    };
  });
}

/** A full agent record from a registration or PUT body; `existing` keeps identity and ownership. */
export function buildAgent(
  body: AgentBodyT,
  user: UserContext,
  existing?: AgentRecord,
  pathOverride?: string,
): AgentRecord {
  if (!body.name?.trim())
    throw unprocessable('SB_ERR_VALIDATION', [{ loc: ['body', 'name'], msg: 'name is required', type: 'missing' }]);
  const path =
    pathOverride ?? normalizeAgentPath(typeof body.path === 'string' && body.path ? body.path : slug(body.name));
  let url = '';
  if (typeof body.url === 'string' && body.url) {
    try {
      const u = new URL(body.url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      url = u.toString();
    } catch {
      throw badRequest('SB_ERR_REGISTRY_INVALID_URL', `url must be an absolute http(s) URL, not '${body.url}'`);
    }
  }
  // Registration never takes a trust level (issue 14): a new card is unverified until an admin changes it with PUT.
  const trust =
    (existing ? (body.trust_level as TrustLevel | undefined) : undefined) ?? existing?.trust_level ?? 'unverified';
  if (trust !== (existing?.trust_level ?? 'unverified') && !isAdmin(user)) {
    throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', 'Only administrators may set trust_level');
  }
  if (!(trust in TRUST_WEIGHT)) throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', `Unknown trust_level ${trust}`);
  const provider =
    typeof body.provider === 'string'
      ? body.provider
      : (body.provider as { organization?: string } | undefined)?.organization;
  const extra = extensionData(body);
  const now = new Date().toISOString();
  return {
    id: existing?.id ?? randomUUID(),
    path,
    name: body.name.trim(),
    description: typeof body.description === 'string' ? body.description : '',
    url,
    version: typeof body.version === 'string' && body.version ? body.version : '1.0.0',
    provider,
    protocol_version:
      typeof (body.protocol_version ?? body.protocolVersion) === 'string'
        ? String(body.protocol_version ?? body.protocolVersion)
        : undefined,
    security_schemes:
      ((body.security_schemes ?? body.securitySchemes) as Record<string, SecurityScheme> | undefined) ?? {},
    skills: skills(body.skills),
    tags: parseTags(body.tags) ?? [],
    visibility: (body.visibility as AgentRecord['visibility'] | undefined) ?? 'public',
    license: typeof body.license === 'string' ? body.license : undefined,
    trust_level: trust,
    is_enabled: existing?.is_enabled ?? true,
    registered_by: existing?.registered_by ?? user.username,
    registered_at: existing?.registered_at ?? now,
    updated_at: now,
    extra,
  };
}

/** The card in the spec's field names; extension data only under `metadata` (records stored before issue 14 included). */
export function agentCard(a: AgentRecord) {
  return {
    metadata: withoutServerFields(a.extra ?? {}),
    id: a.id,
    name: a.name,
    path: a.path,
    description: a.description,
    url: a.url,
    version: a.version,
    provider: a.provider,
    protocol_version: a.protocol_version,
    security_schemes: a.security_schemes,
    skills: a.skills,
    num_skills: a.skills.length,
    tags: a.tags,
    visibility: a.visibility,
    license: a.license,
    trust_level: a.trust_level,
    is_enabled: a.is_enabled,
    registered_by: a.registered_by,
    registered_at: a.registered_at,
    updated_at: a.updated_at,
  };
}
