import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest, conflict, forbidden, notFound } from '../../../core/errors.ts';
import type { UserContext } from '../auth/context.ts';
import { can, ownsOrAdmin, skillVisible } from './access.ts';
import { RatingBody, RatingView } from './ratings.ts';
import type { SkillRecord } from './records.ts';
import { applyVerdict, reviewed, SECURITY_PENDING } from './scan.ts';
import { currentUser } from './server-actions.ts';
import { parseTags } from './server-input.ts';
import { ErrorResponses } from './shared-schemas.ts';
import { fetchSkillMd } from './skill-fetch.ts';

/** Agent Skills (spec 2.3, 4.7; ANCHOR-FACTS skill registration). Rescan and security-scan are a later issue. */

const tags = ['registry: skills'];
const NAME = '^[a-z0-9]+(-[a-z0-9]+)*$';
const Status = Type.Union([
  Type.Literal('active'),
  Type.Literal('deprecated'),
  Type.Literal('draft'),
  Type.Literal('beta'),
]);
const Visibility = Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('group')]);

const SkillBody = Type.Object({
  name: Type.String({
    pattern: NAME,
    minLength: 1,
    maxLength: 64,
    description: 'Lowercase letters, digits and single hyphens',
  }),
  description: Type.String({ minLength: 1 }),
  skill_md_url: Type.String({ minLength: 1 }),
  version: Type.Optional(Type.String()),
  license: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  visibility: Type.Optional(Visibility),
  allowed_tools: Type.Optional(Type.Array(Type.String())),
  status: Type.Optional(Status),
});
const SkillUpdate = Type.Partial(Type.Omit(SkillBody, ['name']));

const SkillView = Type.Object({
  path: Type.String(),
  name: Type.String(),
  description: Type.String(),
  skill_md_url: Type.String(),
  version: Type.Optional(Type.String()),
  license: Type.Optional(Type.String()),
  tags: Type.Array(Type.String()),
  visibility: Type.String(),
  allowed_tools: Type.Array(Type.String()),
  status: Type.String(),
  is_enabled: Type.Boolean(),
  num_stars: Type.Number(),
  registered_by: Type.String(),
  registered_at: Type.String(),
  updated_at: Type.String(),
});
const SkillFull = Type.Composite([SkillView, Type.Object({ skill_md: Type.String() })]);

export default async function skillRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { catalog } = fastify;
  const skills = catalog.skills.index;
  const fetchOpts = {
    allowPrivate: catalog.config.allow_private_skill_urls,
    timeoutMs: catalog.config.skill_fetch_timeout_ms,
    lookup: fastify.sb.hostLookup,
  };
  const view = (s: SkillRecord) => ({ ...s, num_stars: catalog.ratings.average(`skill:${s.path}`) ?? 0 });

  const find = (user: UserContext, name: string): SkillRecord => {
    const s = skills.get(`/skills/${name}`);
    if (!s) throw notFound('SB_ERR_REGISTRY_SKILL_NOT_FOUND', `No skill named ${name}`);
    if (!skillVisible(user, s))
      throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `You do not have access to skill ${s.path}`);
    return s;
  };
  const requireOwner = (user: UserContext, s: SkillRecord, what: string) => {
    if (!ownsOrAdmin(user, s.registered_by, s.path))
      throw forbidden(
        'SB_ERR_REGISTRY_NOT_OWNER',
        `Only the owner of ${s.path} (${s.registered_by}) or an admin may ${what} it`,
      );
  };

  app.post(
    '/api/skills',
    {
      schema: {
        tags,
        summary:
          'Register a skill; SKILL.md is fetched now (400 if that fails); needs register_service or publish_agent',
        body: SkillBody,
        response: {
          201: Type.Composite([
            SkillView,
            Type.Object({
              security_scan: Type.Optional(
                Type.Object({}, { additionalProperties: true, description: 'Scan summary (spec 2.6), when scanned' }),
              ),
            }),
          ]),
          ...ErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const b = request.body;
      const path = `/skills/${b.name}`;
      if (!can(user, 'register_service', path) && !can(user, 'publish_agent', path))
        throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Registering ${path} needs register_service or publish_agent`);
      if (skills.has(path)) throw conflict('SB_ERR_REGISTRY_SKILL_EXISTS', `Skill ${b.name} already exists`);
      const skill_md = await fetchSkillMd(b.skill_md_url, fetchOpts);
      const now = new Date().toISOString();
      const draft: SkillRecord = {
        path,
        name: b.name,
        description: b.description,
        skill_md_url: b.skill_md_url,
        skill_md,
        version: b.version,
        license: b.license,
        tags: parseTags(b.tags) ?? [],
        visibility: b.visibility ?? 'public',
        allowed_tools: b.allowed_tools ?? [],
        status: b.status ?? 'draft',
        is_enabled: true,
        registered_by: user.username,
        owner_groups: user.groups,
        registered_at: now,
        updated_at: now,
      };
      const verdict = await catalog.scanner.skill(draft);
      const record = applyVerdict(draft, verdict);
      await skills.set(path, record);
      return reply
        .status(201)
        .send({ ...view(record), ...(verdict.summary ? { security_scan: verdict.summary } : {}) });
    },
  );

  app.get(
    '/api/skills',
    {
      schema: {
        tags,
        summary: 'Skills the caller may see, paged',
        querystring: Type.Object({
          query: Type.Optional(Type.String()),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
          enabled_only: Type.Boolean({ default: false }),
        }),
        response: {
          200: Type.Object({
            skills: Type.Array(SkillView),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
          ...ErrorResponses,
        },
      },
    },
    async (request) => {
      const user = currentUser(request);
      const { query, limit, offset, enabled_only } = request.query;
      const q = query?.trim().toLowerCase() ?? '';
      const all = skills
        .list()
        .filter(
          (s) =>
            (!enabled_only || (s.is_enabled && !s.tags.includes(SECURITY_PENDING))) &&
            skillVisible(user, s) &&
            (!q ||
              s.name.includes(q) ||
              s.description.toLowerCase().includes(q) ||
              s.tags.some((t) => t.toLowerCase().includes(q))),
        );
      return { skills: all.slice(offset, offset + limit).map(view), total: all.length, limit, offset };
    },
  );

  // `{path}` is the skill name; `/api/skills/skills/<name>` (the full path) is accepted too.
  for (const prefix of ['/api/skills', '/api/skills/skills']) {
    const Param = Type.Object({ name: Type.String({ pattern: NAME }) });

    app.get(
      `${prefix}/:name`,
      {
        schema: {
          tags,
          summary: 'A skill with its SKILL.md',
          params: Param,
          response: { 200: SkillFull, ...ErrorResponses },
        },
      },
      async (request) => view(find(currentUser(request), request.params.name)),
    );

    app.put(
      `${prefix}/:name`,
      {
        schema: {
          tags,
          summary: 'Update a skill (owner or admin); a new skill_md_url is fetched again',
          params: Param,
          body: SkillUpdate,
          response: { 200: SkillView, ...ErrorResponses },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const s = find(user, request.params.name);
        requireOwner(user, s, 'change');
        const b = request.body;
        const next: SkillRecord = { ...s, updated_at: new Date().toISOString() };
        if (b.skill_md_url !== undefined && b.skill_md_url !== s.skill_md_url) {
          next.skill_md = await fetchSkillMd(b.skill_md_url, fetchOpts);
          next.skill_md_url = b.skill_md_url;
        }
        if (b.description !== undefined) next.description = b.description;
        if (b.version !== undefined) next.version = b.version;
        if (b.license !== undefined) next.license = b.license;
        if (b.tags !== undefined)
          next.tags = [
            ...new Set([
              ...(parseTags(b.tags) ?? []),
              ...(s.tags.includes(SECURITY_PENDING) ? [SECURITY_PENDING] : []),
            ]),
          ];
        if (b.visibility !== undefined) next.visibility = b.visibility;
        if (b.allowed_tools !== undefined) next.allowed_tools = b.allowed_tools;
        if (b.status !== undefined) next.status = b.status;
        await skills.set(s.path, next);
        return view(next);
      },
    );

    app.delete(
      `${prefix}/:name`,
      {
        schema: {
          tags,
          summary: 'Remove a skill (owner or admin)',
          params: Param,
          response: { 200: Type.Object({ message: Type.String(), path: Type.String() }), ...ErrorResponses },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const s = find(user, request.params.name);
        requireOwner(user, s, 'remove');
        await skills.delete(s.path);
        await catalog.ratings.remove(`skill:${s.path}`);
        return { message: `Skill ${s.path} removed`, path: s.path };
      },
    );

    app.post(
      `${prefix}/:name/toggle`,
      {
        schema: {
          tags,
          summary: 'Enable or disable a skill; owner, admin or toggle_service',
          params: Param,
          body: Type.Object({ enabled: Type.Union([Type.Boolean(), Type.String()]) }),
          response: {
            200: Type.Object({ path: Type.String(), is_enabled: Type.Boolean(), message: Type.String() }),
            ...ErrorResponses,
          },
        },
      },
      async (request) => {
        const user = currentUser(request);
        const s = find(user, request.params.name);
        if (!ownsOrAdmin(user, s.registered_by, s.path) && !can(user, 'toggle_service', s.path))
          throw forbidden('SB_ERR_REGISTRY_FORBIDDEN', `Toggling ${s.path} needs ownership or toggle_service`);
        const raw = request.body.enabled;
        const enabled =
          typeof raw === 'boolean'
            ? raw
            : ['true', 'on', '1'].includes(raw.toLowerCase())
              ? true
              : ['false', 'off', '0'].includes(raw.toLowerCase())
                ? false
                : undefined;
        if (enabled === undefined) throw badRequest('SB_ERR_REGISTRY_INVALID_FIELD', 'enabled must be true or false');
        // Lifting a scan's block is a review: owners may toggle their skill, but not past security-pending.
        if (enabled && s.tags.includes(SECURITY_PENDING) && !user.is_admin && !can(user, 'toggle_service', s.path))
          throw forbidden(
            'SB_ERR_REGISTRY_SECURITY_PENDING',
            `${s.path} is held for security review (security-pending); an administrator re-enables it`,
          );
        const next = reviewed({ ...s, is_enabled: enabled, updated_at: new Date().toISOString() });
        await skills.set(s.path, next);
        return { path: s.path, is_enabled: enabled, message: `Skill ${s.path} ${enabled ? 'enabled' : 'disabled'}` };
      },
    );

    app.get(
      `${prefix}/:name/rating`,
      {
        schema: {
          tags,
          summary: 'Ratings of a skill',
          params: Param,
          response: { 200: RatingView, ...ErrorResponses },
        },
      },
      async (request) => catalog.ratings.view(`skill:${find(currentUser(request), request.params.name).path}`),
    );

    app.post(
      `${prefix}/:name/rating`,
      {
        schema: {
          tags,
          summary: 'Rate a skill 1-5',
          params: Param,
          body: RatingBody,
          response: { 201: RatingView, ...ErrorResponses },
        },
      },
      async (request, reply) => {
        const user = currentUser(request);
        const s = find(user, request.params.name);
        const { rating, comment } = request.body;
        if (rating < 1 || rating > 5)
          throw badRequest('SB_ERR_REGISTRY_INVALID_RATING', `rating must be an integer from 1 to 5, not ${rating}`);
        return reply.status(201).send(await catalog.ratings.rate(`skill:${s.path}`, user.username, rating, comment));
      },
    );
  }
}
