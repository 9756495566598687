import type { FastifyPluginAsync } from 'fastify';
import { metadataFilter } from '../../../core/metadata-denylist.ts';
import { conversationRoutes } from './conversations.ts';
import { recordRoutes } from './records.ts';
import { resourceRoutes } from './resources.ts';

/** /api/v1/memory: records, conversations, resources; the metadata denylist on every read. */
const routes: FastifyPluginAsync = async (app) => {
  const strip = metadataFilter(app.sb.settings.config.metadata_denylists);
  // Static paths (namespaces, sessions, actors, resources) are registered before the /:namespace routes match them.
  conversationRoutes(app, strip);
  resourceRoutes(app);
  recordRoutes(app, strip);
};

export default routes;
