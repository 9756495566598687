import type { FastifyInstance } from 'fastify';
import type { AgentDeps } from './deps.ts';

/** GET /{name}/export: not built yet. */
export function exportRoutes(_app: FastifyInstance, _deps: AgentDeps): void {}
