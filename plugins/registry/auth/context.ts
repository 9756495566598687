/**
 * The registry's caller model: the seam between identity (plugins/registry/auth)
 * and the catalog (plugins/registry/catalog). The catalog only reads these.
 */
export type UiPermission =
  | 'list_agents'
  | 'get_agent'
  | 'publish_agent'
  | 'modify_agent'
  | 'delete_agent'
  | 'list_service'
  | 'register_service'
  | 'health_check_service'
  | 'toggle_service'
  | 'modify_service';

export interface ServerAccessRule {
  server: string;
  methods: string[];
  tools?: string[];
}

export interface UserContext {
  username: string;
  client_id?: string;
  groups: string[];
  scopes: string[];
  /** keycloak | cognito | entra | okta | auth0 | oidc | self_signed | session_cookie | basic */
  auth_method: string;
  provider: string;
  is_admin: boolean;
  ui_permissions: Partial<Record<UiPermission, string[]>>;
  server_access: ServerAccessRule[];
  /** Agent actions from scope documents: action -> resource paths (or 'all'). */
  agent_actions: Record<string, string[]>;
  token_kind?: 'user' | 'resource';
  resource?: { type: 'server' | 'virtual_server' | 'agent' | 'skill'; id: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the registry auth plugin when the request carried valid credentials. */
    user?: UserContext;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Why presented credentials were refused (the 401 detail), when they were. */
    authFailure?: string;
    /** Which credential produced request.user: CSRF applies to 'cookie', /api/internal/* wants 'basic'. */
    authSource?: 'bearer' | 'basic' | 'cookie' | 'none';
    /** The verified session, when the credential was the session cookie. */
    session?: import('./session.ts').SessionPayload;
  }
}
