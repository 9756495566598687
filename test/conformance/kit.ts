/**
 * The shape every conformance suite shares. A suite is a function that takes the
 * test runner (`t`, tap's Test or anything with the same methods), a factory for
 * the provider under test, and named skips. An outside provider package runs the
 * same suite by importing it and passing its own `t`.
 */
export interface Runner {
  test(name: string, fn: (t: Runner) => Promise<void> | void): Promise<unknown>;
  ok(value: unknown, message?: string): void;
  notOk(value: unknown, message?: string): void;
  equal(found: unknown, wanted: unknown, message?: string): void;
  not(found: unknown, notWanted: unknown, message?: string): void;
  same(found: unknown, wanted: unknown, message?: string): void;
  match(found: unknown, pattern: unknown, message?: string): void;
  rejects(p: Promise<unknown> | (() => Promise<unknown>), expected?: unknown, message?: string): Promise<unknown>;
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
