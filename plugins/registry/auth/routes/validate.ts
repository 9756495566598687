import type { FastifyInstance } from 'fastify';

export default async function validateRoutes(_app: FastifyInstance): Promise<void> {}
