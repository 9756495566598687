import type { FastifyInstance } from 'fastify';

export default async function groupsRoutes(_app: FastifyInstance): Promise<void> {}
