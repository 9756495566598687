import type { FastifyRequest } from 'fastify';
import type { AgentRuntime, Caller } from './runtime/runtime.ts';
import { routingHeaders } from './runtime/runtime.ts';
import type { RunManager } from './runtime/runs.ts';
import type { SseStreams } from './sse.ts';

/** What the agents route files share. */
export interface AgentDeps {
  runtime: AgentRuntime;
  runs: RunManager;
  sse: SseStreams;
}

export function callerOf(request: FastifyRequest): Caller {
  return { principal: request.principal!, headers: routingHeaders(request.headers) };
}
