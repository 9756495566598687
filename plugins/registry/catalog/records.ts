/** Stored shapes of the catalog. Encrypted credentials live only here, never in a response schema. */

export type AuthScheme = 'none' | 'bearer' | 'api_key';
export const AUTH_SCHEMES: readonly AuthScheme[] = ['none', 'bearer', 'api_key'];
export type LifecycleStatus = 'active' | 'deprecated' | 'draft' | 'beta';
export const LIFECYCLE: readonly LifecycleStatus[] = ['active', 'deprecated', 'draft', 'beta'];

export interface ToolDef {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export interface ServerVersion {
  version: string;
  status: LifecycleStatus;
  proxy_pass_url: string;
  registered_at: string;
}

export interface ServerRecord {
  id: string;
  path: string;
  server_name: string;
  description: string;
  proxy_pass_url: string;
  tags: string[];
  num_tools: number;
  num_stars: number;
  is_python: boolean;
  license: string;
  metadata: Record<string, unknown>;
  auth_scheme: AuthScheme;
  auth_header_name?: string;
  /** Fernet token of the backend credential; write-only from the API's point of view. */
  auth_credential_ciphertext?: string;
  auth_credential_encrypted: boolean;
  tool_list_json?: ToolDef[];
  supported_transports: string[];
  headers?: Record<string, string>;
  mcp_endpoint?: string;
  sse_endpoint?: string;
  version?: string;
  status: LifecycleStatus;
  provider_organization?: string;
  provider_url?: string;
  auth_provider?: string;
  auth_type?: string;
  is_enabled: boolean;
  /** Owned by the health checker after registration (`unknown` until the first check). */
  health_status: string;
  last_checked_iso: string | null;
  tools: ToolDef[];
  groups: string[];
  versions: ServerVersion[];
  registered_by: string;
  registered_at: string;
  updated_at: string;
}

export interface SecurityScheme {
  type: string;
  description?: string;
  [k: string]: unknown;
}

export interface AgentSkill {
  id?: string;
  name: string;
  description?: string;
  tags?: string[];
  input_schema?: Record<string, unknown>;
}

export type TrustLevel = 'unverified' | 'community' | 'verified' | 'trusted';

export interface AgentRecord {
  id: string;
  path: string;
  name: string;
  description: string;
  url: string;
  version: string;
  provider?: string;
  protocol_version?: string;
  security_schemes: Record<string, SecurityScheme>;
  skills: AgentSkill[];
  tags: string[];
  visibility: 'public' | 'private' | 'internal';
  license?: string;
  trust_level: TrustLevel;
  is_enabled: boolean;
  registered_by: string;
  registered_at: string;
  updated_at: string;
  /** Other A2A card fields kept as given (capabilities, defaultInputModes, ...). */
  extra: Record<string, unknown>;
}

export interface SkillRecord {
  path: string;
  name: string;
  description: string;
  skill_md_url: string;
  /** The SKILL.md fetched at registration (kept for scanning and search; not returned in lists). */
  skill_md: string;
  version?: string;
  license?: string;
  tags: string[];
  visibility: 'public' | 'private' | 'group';
  allowed_tools: string[];
  status: LifecycleStatus;
  is_enabled: boolean;
  registered_by: string;
  /** The registering user's groups, for `group` visibility. */
  owner_groups: string[];
  registered_at: string;
  updated_at: string;
}

export interface RatingEntry {
  rating: number;
  comment?: string;
  at: string;
}

/** Ratings of one item, one per user (a second rating replaces the first). */
export interface RatingsRecord {
  by_user: Record<string, RatingEntry>;
}

export interface CredentialAudit {
  at: string;
  username: string;
  action: 'set' | 'cleared';
  path: string;
  auth_scheme: AuthScheme;
  auth_header_name?: string;
  via: string;
}
