import type { FastifyInstance } from 'fastify';

export default async function scopesRoutes(_app: FastifyInstance): Promise<void> {}
