import type { FastifyRequest } from 'fastify';
import { badRequest } from '../../../core/errors.ts';
import type { EvaluationsProvider } from '../../../core/primitives/evaluations.ts';

export const evaluationsFor = (request: FastifyRequest) =>
  request.server.sb.providers.resolve<EvaluationsProvider>('evaluations', request.headers);

/** Evaluator types differ per backend (spec 2.6); a type the provider does not know is a 400 listing the ones it does. */
export function checkEvaluatorType(provider: EvaluationsProvider, type: string | undefined): void {
  const accepted = provider.capabilities.evaluator_types;
  if (type === undefined || accepted === 'any' || accepted.includes(type)) return;
  throw badRequest(
    'SB_ERR_EVALUATIONS_BAD_TYPE',
    `Evaluator type '${type}' is not supported by the evaluations provider '${provider.name}'. Supported: ${accepted.join(', ')}`,
  );
}
