import { classifyFailure } from "../errors/classify.ts";
import { sleep } from "../lifecycle/abort.ts";
import type { Clock } from "../lifecycle/clock.ts";
import type { Deadline } from "../lifecycle/deadline.ts";

/**
 * The opt-in retry of transient refusals during establishment (R7): a 429 or 503 that named its
 * wait in Retry-After is waited out and the same request asked again, on the same transport, so
 * nothing about the era or transport changes. The count is the establishment's: every request of
 * every attempt draws on the same `maxRetries`, so recovery does not multiply the waits. A wait
 * that would not end before the deadline fails at once instead.
 */
export class TransientRetry {
  #left: number;
  readonly #deadline: Deadline;
  readonly #clock: Clock;

  constructor(maxRetries: number, deadline: Deadline, clock: Clock) {
    this.#left = maxRetries;
    this.#deadline = deadline;
    this.#clock = clock;
  }

  async run<T>(signal: AbortSignal, ask: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await ask();
      } catch (error) {
        const wait = classifyFailure(error).retryAfterMs;
        if (wait === undefined || this.#left <= 0 || wait >= this.#deadline.remainingMs()) throw error;
        this.#left--;
        await sleep(this.#clock, wait, signal);
      }
    }
  }
}
