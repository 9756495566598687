import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** Cursor paging shared by the engine and policy lists (spec 4.6: max_results, next_token). */
export const PageQuery = Type.Object({
  max_results: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  next_token: Type.Optional(Type.String({ minLength: 1, description: 'Opaque token from the previous page' })),
});
export type PageQuery = Static<typeof PageQuery>;

/** Spec 2.7: an engine holds a set of policies evaluated together. */
export const Engine = Type.Object({
  engine_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  /** Engine settings as given at creation (free-form; the reference client sends it). */
  config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  created_at: Type.String({ format: 'date-time' }),
});
export type Engine = Static<typeof Engine>;

export const CreateEngineRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    description: Type.String({ default: '', maxLength: 4096 }),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type CreateEngineRequest = Static<typeof CreateEngineRequest>;

export const EngineList = Type.Object({
  engines: Type.Array(Engine),
  next_token: Type.Union([Type.String(), Type.Null()]),
});
export type EngineList = Static<typeof EngineList>;

/** Spec 2.7: the body is text in the engine's policy language (e.g. Cedar). */
export const Policy = Type.Object({
  policy_id: Type.String(),
  engine_id: Type.String(),
  policy_body: Type.String(),
  description: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type Policy = Static<typeof Policy>;

export const CreatePolicyRequest = Type.Object(
  {
    policy_body: Type.String({ minLength: 1, maxLength: 262144, description: 'Policy text in the engine language' }),
    description: Type.String({ default: '', maxLength: 4096 }),
  },
  { additionalProperties: false },
);
export type CreatePolicyRequest = Static<typeof CreatePolicyRequest>;

export const UpdatePolicyRequest = Type.Object(
  {
    policy_body: Type.Optional(Type.String({ minLength: 1, maxLength: 262144 })),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdatePolicyRequest = Static<typeof UpdatePolicyRequest>;

export const PolicyList = Type.Object({
  policies: Type.Array(Policy),
  next_token: Type.Union([Type.String(), Type.Null()]),
});
export type PolicyList = Static<typeof PolicyList>;

/** GET /enforcement: which engine guards /api/v1 and whether enforcement is on. */
export const EnforcementStatus = Type.Object({
  engine_id: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
});
export type EnforcementStatus = Static<typeof EnforcementStatus>;

/** Policy generation (managed-cloud only): the request is the backend's own shape. */
export const GenerationRequest = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Type.String()),
    content: Type.Optional(Type.String({ description: 'Natural-language description of the wanted policies' })),
  },
  { additionalProperties: true },
);
export type GenerationRequest = Static<typeof GenerationRequest>;

export const Generation = Type.Object({
  generation_id: Type.String(),
  engine_id: Type.String(),
  status: Type.String({ description: 'Backend status, e.g. IN_PROGRESS, COMPLETED, FAILED' }),
  created_at: Type.String(),
  details: Type.Optional(JsonObject),
});
export type Generation = Static<typeof Generation>;

export const GenerationList = Type.Object({
  generations: Type.Array(Generation),
  next_token: Type.Union([Type.String(), Type.Null()]),
});
export type GenerationList = Static<typeof GenerationList>;

export const GenerationAssets = Type.Object({
  generation_id: Type.String(),
  assets: Type.Array(
    Type.Object({ policy_body: Type.String(), description: Type.String() }, { additionalProperties: true }),
  ),
});
export type GenerationAssets = Static<typeof GenerationAssets>;

/** A Cedar-style authorization question (ANCHOR-FACTS: principal User::"id", action Action::"area:op", resource path). */
export interface AuthorizationRequest {
  principal: string;
  action: string;
  resource: string;
  context?: Record<string, unknown>;
  /** The engine whose policies decide; default: the enforcing engine. */
  engine_id?: string;
  /** Entities the principal is `in`, e.g. `Group::"research"`. */
  principal_parents?: string[];
  /** Attributes of the principal entity (is_admin, type), for `when { principal.is_admin }`. */
  principal_attrs?: Record<string, unknown>;
}

export interface AuthorizationDecision {
  decision: 'allow' | 'deny';
  /** Ids of the policies that decided, when the engine reports them. */
  reasons: string[];
}

export interface PolicyCapabilities {
  /** Engine and policy CRUD. */
  engines: boolean;
  /** The provider checks policy_body against its language and rejects bad text (400). */
  validates_policies: boolean;
  /** Policy generation (managed-cloud only). */
  generations: boolean;
  /** `authorize` answers real decisions, so enforcement can be switched on. */
  enforcement: boolean;
  [k: string]: boolean | string | readonly string[];
}

/**
 * The policy primitive. Unknown ids answer `undefined` (or `false` for
 * deletes); the plugin turns that into 404 so every provider reports the same
 * errors. A policy body the engine cannot parse throws a 400 SwitchboardError.
 */
export interface PolicyProvider extends ProviderBase {
  readonly kind: 'policy';
  readonly capabilities: PolicyCapabilities;
  enforcement(): Promise<EnforcementStatus>;
  createEngine(req: CreateEngineRequest): Promise<Engine>;
  getEngine(engineId: string): Promise<Engine | undefined>;
  listEngines(page: PageQuery): Promise<EngineList>;
  deleteEngine(engineId: string): Promise<boolean>;
  createPolicy(engineId: string, req: CreatePolicyRequest): Promise<Policy | undefined>;
  getPolicy(engineId: string, policyId: string): Promise<Policy | undefined>;
  listPolicies(engineId: string, page: PageQuery): Promise<PolicyList | undefined>;
  updatePolicy(engineId: string, policyId: string, patch: UpdatePolicyRequest): Promise<Policy | undefined>;
  deletePolicy(engineId: string, policyId: string): Promise<boolean>;
  /** Present when capability `generations` is true. */
  startGeneration?(engineId: string, req: GenerationRequest): Promise<Generation>;
  listGenerations?(engineId: string, page: PageQuery): Promise<GenerationList>;
  getGeneration?(engineId: string, generationId: string): Promise<Generation | undefined>;
  getGenerationAssets?(engineId: string, generationId: string): Promise<GenerationAssets | undefined>;
  /** Present when capability `enforcement` is true. */
  authorize?(req: AuthorizationRequest): Promise<AuthorizationDecision>;
}
