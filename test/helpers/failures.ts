// How a test expects a failure: the TetherError a promise rejects with, or how a call settled and
// how long it took. One copy for every test (the auth tests each kept their own before).

import assert from "node:assert/strict";
import { type AttemptFailure, type RecoveryPolicy, TetherError } from "../../src/index.ts";

/** The TetherError `p` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(p: Promise<unknown>): Promise<TetherError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof TetherError, `a TetherError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a rejection");
}

export interface Settled<T> {
  value?: T;
  error?: unknown;
  /** From the call to settling. */
  ms: number;
}

/** Awaits a promise and reports how it settled and how long it took; never throws. */
export async function timed<T>(run: () => Promise<T>): Promise<Settled<T>> {
  const started = performance.now();
  try {
    const value = await run();
    return { value, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

/** The rejection of a settled promise, as a TetherError; fails (with the resolved value's kind) otherwise. */
export function tetherErrorOf(settled: Settled<unknown>): TetherError {
  if (!("error" in settled) || settled.error === undefined) {
    throw new Error(`expected a rejection, but it resolved after ${Math.round(settled.ms)} ms`);
  }
  if (!TetherError.is(settled.error)) {
    throw new Error(`expected a TetherError, got ${String(settled.error)}`);
  }
  return settled.error;
}

/**
 * A recovery policy of `maxAttempts` with a 1 ms back-off whose `shouldRetry` hands each failure
 * it is asked about to `told`, then answers `answer` (a value, or a promise of one).
 */
export function askingRecovery(
  maxAttempts: number,
  told: (failure: AttemptFailure) => void,
  answer: boolean | Promise<boolean>,
): RecoveryPolicy {
  return {
    maxAttempts,
    backoffMs: 1,
    shouldRetry: (failure) => {
      told(failure);
      return answer;
    },
  };
}
