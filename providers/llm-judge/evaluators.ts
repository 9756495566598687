import { randomUUID } from 'node:crypto';
import { badRequest } from '../../core/errors.ts';
import type {
  CreateEvaluatorRequest,
  Evaluator,
  EvaluatorList,
  EvaluatorPageQuery,
  UpdateEvaluatorRequest,
} from '../../core/primitives/evaluations.ts';
import type { Collection } from '../../core/store-types.ts';
import { rubricOf } from './rubric.ts';

/** Evaluators kept in the core store, listed oldest first and paged by an opaque offset token. */
export class EvaluatorStore {
  constructor(private readonly col: Collection<Evaluator>) {}

  async create(req: CreateEvaluatorRequest): Promise<Evaluator> {
    rubricOf(req.name, req.config ?? {});
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
    await this.col.set(ev.evaluator_id, ev);
    return ev;
  }

  get = (id: string) => this.col.get(id);

  async update(id: string, patch: UpdateEvaluatorRequest): Promise<Evaluator | undefined> {
    const cur = await this.col.get(id);
    if (!cur) return undefined;
    const next: Evaluator = {
      ...cur,
      name: patch.name ?? cur.name,
      evaluator_type: patch.evaluator_type ?? cur.evaluator_type,
      config: patch.config ?? cur.config,
      description: patch.description ?? cur.description,
      updated_at: new Date().toISOString(),
    };
    rubricOf(next.name, next.config);
    await this.col.set(id, next);
    return next;
  }

  delete = (id: string) => this.col.delete(id);

  async list(page: EvaluatorPageQuery): Promise<EvaluatorList> {
    let offset = 0;
    if (page.next_token !== undefined) {
      const text = Buffer.from(page.next_token, 'base64url').toString('utf8');
      if (!/^\d+$/.test(text))
        throw badRequest(
          'SB_ERR_EVALUATIONS_BAD_TOKEN',
          `next_token '${page.next_token}' is not a token from a previous page; omit it to start at the first page`,
        );
      offset = Number(text);
    }
    const all: Evaluator[] = [];
    for await (const [, ev] of this.col.entries()) all.push(ev);
    all.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.evaluator_id.localeCompare(b.evaluator_id));
    const end = offset + page.max_results;
    return {
      evaluators: all.slice(offset, end),
      next_token: end < all.length ? Buffer.from(String(end), 'utf8').toString('base64url') : null,
    };
  }
}
