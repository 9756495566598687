import type { CompletionRequest, LlmProvider } from '../../../../core/primitives/llm.ts';
import { TeamStop, type TeamLimit } from './events.ts';

/**
 * The run's limits, enforced by the server (the reference reads neither):
 * `global_max_turns` counts every LLM call of every member, and
 * `global_timeout_seconds` is wall time from the start. Hitting either aborts
 * the run's signal, so every member stops at its next checkpoint.
 */
export class Budget {
  turns = 0;
  private readonly deadline: number;
  private readonly timer: NodeJS.Timeout;
  private readonly controller = new AbortController();
  /** Why the run was stopped; undefined while it may go on. */
  stop?: TeamStop;

  constructor(
    readonly maxTurns: number,
    readonly timeoutSeconds: number,
    outer: AbortSignal,
  ) {
    this.deadline = Date.now() + timeoutSeconds * 1000;
    this.timer = setTimeout(
      () =>
        this.halt(
          new TeamStop('timed_out', 'global_timeout_seconds', `global_timeout_seconds (${timeoutSeconds}) reached`),
        ),
      timeoutSeconds * 1000,
    );
    this.timer.unref();
    if (outer.aborted) this.halt(new TeamStop('cancelled'));
    else outer.addEventListener('abort', () => this.halt(new TeamStop('cancelled')), { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  halt(stop: TeamStop): void {
    if (this.stop) return; // the first reason wins
    this.stop = stop;
    clearTimeout(this.timer);
    this.controller.abort(stop);
  }

  limitMessage(limit: TeamLimit): string {
    return limit === 'global_max_turns'
      ? `global_max_turns (${this.maxTurns}) reached`
      : `global_timeout_seconds (${this.timeoutSeconds}) reached`;
  }

  /** Throws the stop reason when the run must not go on (a worker checkpoint). */
  check(): void {
    if (!this.stop && Date.now() >= this.deadline)
      this.halt(new TeamStop('timed_out', 'global_timeout_seconds', this.limitMessage('global_timeout_seconds')));
    if (this.stop) throw this.stop;
  }

  /** One LLM turn is taken from the budget; the turn past the limit stops the run instead. */
  take(): void {
    this.check();
    if (this.turns >= this.maxTurns) {
      this.halt(new TeamStop('failed', 'global_max_turns', this.limitMessage('global_max_turns')));
      throw this.stop!;
    }
    this.turns++;
  }

  /** The member's LLM, counted: every completion or stream call is one turn of the team's budget. */
  wrap(llm: LlmProvider): LlmProvider {
    const take = () => this.take();
    return Object.assign(Object.create(llm) as LlmProvider, {
      complete: (req: CompletionRequest, opts?: { signal?: AbortSignal }) => {
        take();
        return llm.complete(req, opts);
      },
      stream: (req: CompletionRequest, opts?: { signal?: AbortSignal }) => {
        take();
        return llm.stream(req, opts);
      },
    });
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
