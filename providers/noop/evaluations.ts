import { randomUUID } from 'node:crypto';
import type { EvaluationsCapabilities, EvaluationsProvider, Evaluator } from '../../core/primitives/evaluations.ts';
import type { ProviderFactory } from '../../core/provider.ts';
import { pageOf } from './paging.ts';

const CAPABILITIES: EvaluationsCapabilities = {
  evaluators: true,
  evaluate: true,
  evaluator_types: 'any',
  scores: false,
  online_configs: false,
};

/**
 * Evaluators of any type kept in memory; `evaluate` judges nothing and answers
 * a placeholder score marked `placeholder: true` (spec 4.5: "noop:
 * placeholder score"). Scores need the score-recording backend and online
 * configs the managed-cloud one, so both are declared unsupported and their
 * methods are absent.
 */
export const noopEvaluations: ProviderFactory<EvaluationsProvider> = {
  type: 'noop',
  kind: 'evaluations',
  autoInstance: true,
  description: 'Keeps evaluators in memory; evaluate answers a placeholder score',
  create: (name) => {
    const evaluators = new Map<string, Evaluator>();
    const copy = <T>(v: T): T => structuredClone(v);
    return {
      name,
      type: 'noop',
      kind: 'evaluations',
      capabilities: CAPABILITIES,
      async createEvaluator(req) {
        const now = new Date().toISOString();
        const ev: Evaluator = {
          evaluator_id: randomUUID(),
          name: req.name,
          evaluator_type: req.evaluator_type,
          config: req.config ?? {},
          description: req.description ?? '',
          created_at: now,
          updated_at: now,
        };
        evaluators.set(ev.evaluator_id, ev);
        return copy(ev);
      },
      async getEvaluator(id) {
        const e = evaluators.get(id);
        return e && copy(e);
      },
      async listEvaluators(page) {
        const { items, next_token } = pageOf(
          [...evaluators.values()],
          page.max_results,
          page.next_token,
          'SB_ERR_EVALUATIONS_BAD_TOKEN',
        );
        return { evaluators: items.map(copy), next_token };
      },
      async updateEvaluator(id, patch) {
        const current = evaluators.get(id);
        if (!current) return undefined;
        const next: Evaluator = {
          ...current,
          name: patch.name ?? current.name,
          evaluator_type: patch.evaluator_type ?? current.evaluator_type,
          config: patch.config ?? current.config,
          description: patch.description ?? current.description,
          updated_at: new Date().toISOString(),
        };
        evaluators.set(id, next);
        return copy(next);
      },
      async deleteEvaluator(id) {
        return evaluators.delete(id);
      },
      async evaluate(req) {
        const ev = evaluators.get(req.evaluator_id);
        return {
          evaluator_id: req.evaluator_id,
          target: req.target ?? null,
          placeholder: true,
          results: [
            {
              name: ev?.name ?? req.evaluator_id,
              value: 0,
              data_type: 'NUMERIC',
              explanation: `Placeholder: the noop evaluations provider '${name}' judges nothing; configure a real evaluations provider for scores`,
            },
          ],
        };
      },
      healthcheck: async () => 'ok',
      close: async () => evaluators.clear(),
    };
  },
};
