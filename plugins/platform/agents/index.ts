import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { validateSection } from '../../../core/config.ts';
import { chatRoutes } from './routes-chat.ts';
import { exportRoutes } from './routes-export.ts';
import { sessionRoutes } from './routes-sessions.ts';
import { specRoutes } from './routes-specs.ts';
import { SseStreams } from './sse.ts';
import { metadataFilter } from '../../../core/metadata-denylist.ts';
import { RunManager } from './runtime/runs.ts';
import { AgentRuntime } from './runtime/runtime.ts';

/** `platform.agents` settings: run bookkeeping intervals (defaults suit production). */
const AgentsSettings = Type.Object(
  {
    heartbeat_ms: Type.Integer({ minimum: 10, default: 2000 }),
    stale_after_ms: Type.Integer({ minimum: 20, default: 10_000 }),
    flush_ms: Type.Integer({ minimum: 0, default: 25 }),
    poll_ms: Type.Integer({ minimum: 5, default: 100 }),
    resume_wait_ms: Type.Integer({ minimum: 0, default: 180_000 }),
    event_ttl_ms: Type.Integer({ minimum: 1000, default: 7 * 24 * 3600 * 1000 }),
  },
  { additionalProperties: false },
);

/** /api/v1/agents: declarative agents, their tool loop, background runs and sessions. */
const agents: FastifyPluginAsync = async (app) => {
  const settings = validateSection(AgentsSettings, app.sb.settings.config.platform?.agents, 'platform.agents');
  const runtime = new AgentRuntime(app.sb, metadataFilter(app.sb.settings.config.metadata_denylists));
  const runs = new RunManager(app.sb.store, settings, app.log);
  const sse = new SseStreams();
  // preClose: before the server waits for connections, end the event streams it would wait on.
  app.addHook('preClose', async () => {
    await runs.close();
    sse.closeAll();
  });
  const deps = { runtime, runs, sse };
  specRoutes(app, deps);
  chatRoutes(app, deps);
  sessionRoutes(app, deps);
  exportRoutes(app, deps);
};

export default agents;
