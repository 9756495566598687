/**
 * The shape every conformance suite shares. A suite is a function that takes the
 * test runner (`t`, tap's Test or anything with the same methods), a factory for
 * the provider under test, and named skips. An outside provider package runs the
 * same suite by importing it and passing its own `t`.
 */
/** An optional assertion message, in the tuple form tap's assertions take. */
type Msg = [] | [message: string];

export interface Runner {
  // tap's Test.test is overloaded and typed on its own class; the loose parameter keeps Test assignable here.
  test(name: string, fn: (t: any) => Promise<void> | void): PromiseLike<unknown>;
  ok(value: unknown, ...message: Msg): unknown;
  notOk(value: unknown, ...message: Msg): unknown;
  equal(found: unknown, wanted: unknown, ...message: Msg): unknown;
  not(found: unknown, notWanted: unknown, ...message: Msg): unknown;
  same(found: unknown, wanted: unknown, ...message: Msg): unknown;
  match(found: unknown, pattern: unknown, ...message: Msg): unknown;
  rejects(p: Promise<unknown> | (() => Promise<unknown>), ...rest: any[]): PromiseLike<unknown>;
  skip(name: string, fn?: unknown): unknown;
  comment(...args: unknown[]): void;
  teardown(fn: () => unknown): void;
}

export interface Skip {
  /** Why these cases do not apply to this provider: shown in the test output. */
  reason: string;
  tests: string[];
}

export interface SuiteOptions<P> {
  /** A fresh provider instance per case (empty state). */
  make: () => Promise<P>;
  skip?: Skip[];
}

/** Run `name` unless the options skip it, in which case the skip and its reason are reported. */
export function caseRunner<P>(t: Runner, opts: SuiteOptions<P>) {
  const skipped = new Map<string, string>();
  for (const s of opts.skip ?? []) for (const name of s.tests) skipped.set(name, s.reason);
  return (name: string, fn: (t: Runner, provider: P) => Promise<void>) => {
    const reason = skipped.get(name);
    if (reason !== undefined) return t.skip(`${name} (skipped: ${reason})`);
    return t.test(name, async (tt) => {
      const provider = await opts.make();
      tt.teardown(() => (provider as { close?: () => Promise<void> }).close?.());
      await fn(tt, provider);
    });
  };
}
