import { Type, type Static } from '@sinclair/typebox';
import type { ProviderBase } from '../provider.ts';

/**
 * Free-form metadata: any JSON object. Written as `additionalProperties: true`
 * rather than TypeBox's Record (a `patternProperties` of `^(.*)$`): the two
 * accept the same objects, but fast-json-stringify serialises the Record form
 * with a pattern test per key, about a third of the cost of writing a record.
 */
const Metadata = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });

export const MemoryRecord = Type.Object({
  namespace: Type.String(),
  key: Type.String(),
  content: Type.String(),
  metadata: Metadata,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type MemoryRecord = Static<typeof MemoryRecord>;

export const StoreRequest = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 512 }),
  content: Type.String(),
  metadata: Type.Optional(Metadata),
});
export type StoreRequest = Static<typeof StoreRequest>;

export const SearchRequest = Type.Object({
  query: Type.String(),
  top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
  /** Exact-match filters on top-level metadata keys. */
  filters: Type.Optional(Metadata),
});
export type SearchRequest = Static<typeof SearchRequest>;

export const SearchHit = Type.Object({ record: MemoryRecord, score: Type.Number() });
export type SearchHit = Static<typeof SearchHit>;

export const EventMessage = Type.Object({ text: Type.String(), role: Type.String() });
export const MemoryEvent = Type.Object({
  event_id: Type.String(),
  actor_id: Type.String(),
  session_id: Type.String(),
  messages: Type.Array(EventMessage),
  timestamp: Type.String({ format: 'date-time' }),
  metadata: Metadata,
  /** Set when the event was written on a branch rather than the main line. */
  branch: Type.Optional(Type.String()),
});
export type MemoryEvent = Static<typeof MemoryEvent>;

export const CreateEventRequest = Type.Object({
  messages: Type.Array(EventMessage, { minItems: 1 }),
  metadata: Type.Optional(Metadata),
  branch: Type.Optional(Type.String()),
});
export type CreateEventRequest = Static<typeof CreateEventRequest>;

export const MemorySession = Type.Object({
  session_id: Type.String(),
  actor_id: Type.String(),
  message_count: Type.Integer(),
  last_activity: Type.String({ format: 'date-time' }),
});
export type MemorySession = Static<typeof MemorySession>;

export const Branch = Type.Object({
  name: Type.String(),
  root_event_id: Type.String(),
  actor_id: Type.String(),
  session_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
export type Branch = Static<typeof Branch>;

export const CreateBranchRequest = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  root_event_id: Type.String({ minLength: 1 }),
  messages: Type.Optional(Type.Array(EventMessage)),
});
export type CreateBranchRequest = Static<typeof CreateBranchRequest>;

export const Strategy = Type.Object({
  strategy_id: Type.String(),
  name: Type.String(),
  type: Type.String({ description: 'e.g. semantic, summary, user_preference' }),
  namespaces: Type.Array(Type.String()),
  config: Metadata,
});
export type Strategy = Static<typeof Strategy>;

export const MemoryResource = Type.Object({
  memory_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  status: Type.String(),
  strategies: Type.Array(Strategy),
  created_at: Type.String({ format: 'date-time' }),
});
export type MemoryResource = Static<typeof MemoryResource>;

export const CreateResourceRequest = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  strategies: Type.Optional(Type.Array(Type.Omit(Strategy, ['strategy_id']))),
});
export type CreateResourceRequest = Static<typeof CreateResourceRequest>;
export const CreateStrategyRequest = Type.Omit(Strategy, ['strategy_id']);
export type CreateStrategyRequest = Static<typeof CreateStrategyRequest>;

export interface MemoryCapabilities {
  /** `none` means search answers 501. */
  search: 'none' | 'lexical' | 'semantic' | 'hybrid';
  events: boolean;
  branches: boolean;
  resources: boolean;
  durable: boolean;
  [k: string]: boolean | string | readonly string[];
}

export interface ListPage {
  limit: number;
  offset: number;
}

/** The memory primitive. Methods behind a capability may throw if called without it. */
export interface MemoryProvider extends ProviderBase {
  readonly kind: 'memory';
  readonly capabilities: MemoryCapabilities;
  store(namespace: string, req: StoreRequest): Promise<MemoryRecord>;
  retrieve(namespace: string, key: string): Promise<MemoryRecord | undefined>;
  list(namespace: string, page: ListPage): Promise<{ records: MemoryRecord[]; total: number }>;
  search(namespace: string, req: SearchRequest): Promise<SearchHit[]>;
  delete(namespace: string, key: string): Promise<boolean>;
  namespaces(): Promise<string[]>;

  createEvent(actorId: string, sessionId: string, req: CreateEventRequest): Promise<MemoryEvent>;
  listEvents(actorId: string, sessionId: string, opts?: { branch?: string; limit?: number }): Promise<MemoryEvent[]>;
  getEvent(actorId: string, sessionId: string, eventId: string): Promise<MemoryEvent | undefined>;
  deleteEvent(actorId: string, sessionId: string, eventId: string): Promise<boolean>;
  /** The last `k` events, oldest first, each as one turn. */
  turns(
    actorId: string,
    sessionId: string,
    k: number,
    opts?: { branch?: string },
  ): Promise<Array<{ messages: Array<{ text: string; role: string }> }>>;
  actors(): Promise<string[]>;
  sessions(actorId: string): Promise<MemorySession[]>;
  deleteSession?(actorId: string, sessionId: string): Promise<boolean>;

  createBranch?(actorId: string, sessionId: string, req: CreateBranchRequest): Promise<Branch>;
  listBranches?(actorId: string, sessionId: string): Promise<Branch[]>;

  createResource?(req: CreateResourceRequest): Promise<MemoryResource>;
  listResources?(): Promise<MemoryResource[]>;
  getResource?(memoryId: string): Promise<MemoryResource | undefined>;
  deleteResource?(memoryId: string): Promise<boolean>;
  listStrategies?(memoryId: string): Promise<Strategy[]>;
  addStrategy?(memoryId: string, req: CreateStrategyRequest): Promise<Strategy>;
  deleteStrategy?(memoryId: string, strategyId: string): Promise<boolean>;
}
