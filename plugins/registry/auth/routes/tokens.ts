import type { FastifyInstance } from 'fastify';

export default async function tokensRoutes(_app: FastifyInstance): Promise<void> {}
