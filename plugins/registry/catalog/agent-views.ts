import { Type } from '@sinclair/typebox';

export const AgentSkillSchema = Type.Object(
  {
    name: Type.String(),
    id: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
    input_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

/** The card as registered, with the registry's fields; unknown A2A fields given at registration pass through. */
export const AgentCardSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    path: Type.String(),
    description: Type.String(),
    url: Type.String(),
    version: Type.String(),
    provider: Type.Optional(Type.String()),
    protocol_version: Type.Optional(Type.String()),
    security_schemes: Type.Record(Type.String(), Type.Object({ type: Type.String() }, { additionalProperties: true })),
    skills: Type.Array(AgentSkillSchema),
    num_skills: Type.Integer(),
    tags: Type.Array(Type.String()),
    visibility: Type.String(),
    license: Type.Optional(Type.String()),
    trust_level: Type.String(),
    is_enabled: Type.Boolean(),
    registered_by: Type.String(),
    registered_at: Type.String(),
    updated_at: Type.String(),
    metadata: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Card fields the registry does not know (A2A extensions), kept apart from its own',
    }),
  },
  { additionalProperties: false },
);

export const AgentListItem = Type.Object({
  name: Type.String(),
  path: Type.String(),
  description: Type.String(),
  url: Type.String(),
  version: Type.String(),
  is_enabled: Type.Boolean(),
  visibility: Type.String(),
  trust_level: Type.String(),
  tags: Type.Array(Type.String()),
  num_skills: Type.Integer(),
});
