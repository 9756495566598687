/**
 * The tags of /openapi.json with the description /docs shows for each. Route
 * files name a tag in their schema; a few surfaces grew two spellings of one
 * group, which canonicalTag folds together so the docs page lists it once.
 */
export const TAGS: Record<string, string> = {
  ops: 'Liveness, readiness, metrics and the landing page. Public.',
  auth: 'Logging in and out, the CSRF token, who the caller is, and the auth configuration UIs read.',
  tokens: 'Registry tokens: mint one for yourself (bound to a resource if you like) and list them.',
  scopes: 'The registry scopes that map groups to what they may do.',
  'mcp-gateway': 'The MCP gateway: Streamable HTTP and SSE proxied to the registered server, with auth in front.',
  'registry: servers': 'MCP servers in the registry: register, edit, enable, rate, version and group them.',
  'registry: agents': 'A2A agents in the registry: register, discover (also semantically), enable and edit them.',
  'registry: skills': 'Skills in the registry: register, rate, enable and edit them.',
  'registry: search':
    'One ranked search over servers, tools, agents and skills (lexical + semantic), limited to what the caller may list.',
  'registry: health': 'Health of registered servers: the periodic check, refreshing one now, and the live status feed.',
  'registry: internal':
    'Internal registry operations for administration scripts (admin only), including server groups.',
  'registry: discovery': 'Public discovery documents: enabled servers with how to reach them, and the registry health.',
  'registry: ui': 'The registry pages and the JSON endpoints they call.',
  'registry: older paths': 'Unprefixed paths kept for clients of the older registry API.',
  'registry: v0': 'The MCP registry v0 API (read only).',
  'registry: v0.1': 'The MCP registry v0.1 API (read only).',
  registry: 'Registry operations without a more specific group.',
  platform: 'Platform operations without a more specific group.',
  providers: 'The provider instances of each primitive, their capabilities and health.',
  credentials: 'Stored pass-through credentials of the caller and their status.',
  identity: 'Workload identities, credential providers, API keys and tokens, and the JWKS of workload tokens.',
  memory: 'Key-value and semantic memory, memory resources with their strategies, actors, sessions and events.',
  llm: 'Model list and completions (also streamed) through the configured LLM providers.',
  agents: 'Agents defined on the platform: chat (also streamed), sessions, memory, tools and export as code.',
  teams: 'Teams of agents: runs, their tasks and events (also streamed), cancel and retry, export as code.',
  browser: 'Browser sessions: navigate, click, type, evaluate, content, screenshots and the signed live view.',
  code_interpreter: 'Code interpreter sessions: execute code, upload and download files, history.',
  tools: 'Tools of the platform and of registered MCP servers: search, describe and invoke.',
  policy: 'Policy engines, their policies, generated policies and the enforcement status.',
  evaluations: 'Evaluators, evaluating an output, scores and online evaluation configurations.',
  observability: 'Traces, generations, scores, logs and sessions, and flushing the exporters.',
};

/** Spellings of one group that route files use, mapped to the tag listed above. */
const ALIASES: Record<string, string> = {
  internal: 'registry: internal',
  'registry-internal': 'registry: internal',
  'registry-health': 'registry: health',
};

export function canonicalTag(tag: string): string {
  return ALIASES[tag] ?? tag;
}
