/** Shapes of the registry API answers the pages read (from the route schemas under plugins/registry). */
export interface ServerSummary {
  path: string;
  name: string;
  server_name: string;
  description: string;
  is_enabled: boolean;
  health_status: string;
  num_tools: number;
  tags: string[];
  status: string;
}

export interface Tool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export interface ServerDetail extends ServerSummary {
  proxy_pass_url?: string;
  num_stars: number;
  is_python: boolean;
  license: string;
  metadata: Record<string, unknown>;
  auth_scheme: string;
  auth_header_name?: string;
  auth_credential_encrypted: boolean;
  supported_transports: string[];
  mcp_endpoint?: string;
  sse_endpoint?: string;
  version?: string;
  last_checked_iso: string | null;
  tools: Tool[];
  versions: Array<{ version: string; status: string; registered_at: string; is_latest: boolean }>;
  groups: string[];
  registered_by: string;
  registered_at: string;
  updated_at: string;
}

export interface AgentItem {
  name: string;
  path: string;
  description: string;
  url: string;
  version: string;
  is_enabled: boolean;
  visibility: string;
  trust_level: string;
  tags: string[];
  num_skills: number;
}

export interface Skill {
  path: string;
  name: string;
  description: string;
  skill_md_url: string;
  version?: string;
  license?: string;
  tags: string[];
  visibility: string;
  allowed_tools: string[];
  status: string;
  is_enabled: boolean;
  num_stars: number;
  registered_by: string;
  registered_at: string;
  updated_at: string;
  skill_md?: string;
}

/** `/everything` -> `everything`, for URLs that take the path without its leading slash. */
export const bare = (p: string) => p.replace(/^\/+|\/+$/g, '');
