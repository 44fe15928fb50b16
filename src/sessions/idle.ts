/**
 * When a session has been idle long enough to end: nothing in flight (no request, no watch) for
 * the whole timeout. Time comes from a Clock so the decision is tested on a fake one.
 */
import type { Clock } from "../lifecycle/clock.ts";

/** The idle timeout when none is given: 30 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** The longest idle timeout accepted: 7 days. */
export const MAX_IDLE_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;

export class IdleTimer {
  #busy = 0;
  #timer: unknown;
  #lastUsed: number;
  #stopped = false;

  constructor(
    readonly timeoutMs: number,
    private readonly clock: Clock,
    private readonly onExpire: () => void,
  ) {
    this.#lastUsed = clock.now();
    this.#arm();
  }

  /** When the session was last used (clock time). */
  get lastUsed(): number {
    return this.#lastUsed;
  }

  /** Whether something is in flight now. */
  get busy(): boolean {
    return this.#busy > 0;
  }

  /** Marks the start of a use; the returned function marks its end (once). */
  begin(): () => void {
    this.#busy++;
    this.#lastUsed = this.clock.now();
    this.#disarm();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#busy--;
      this.#lastUsed = this.clock.now();
      if (this.#busy === 0) this.#arm();
    };
  }

  stop(): void {
    this.#stopped = true;
    this.#disarm();
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#disarm();
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = undefined;
      if (!this.#stopped && this.#busy === 0) this.onExpire();
    }, this.timeoutMs);
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
