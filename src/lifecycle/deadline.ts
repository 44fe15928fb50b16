import { Interrupt } from "../errors/interrupt.ts";
import { type LinkedSignal, linkSignals, timeoutSignal } from "./abort.ts";
import type { Clock } from "./clock.ts";

/**
 * One budget for a whole piece of work (an establishment, or one call). It starts when it is
 * made, before any I/O, and nothing resets it. Each stage inside runs on `stage(limit)`: the
 * smaller of its own limit and what remains.
 */
export class Deadline {
  readonly totalMs: number;
  readonly signal: AbortSignal;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #linked: LinkedSignal;

  constructor(clock: Clock, totalMs: number, caller?: AbortSignal) {
    this.#clock = clock;
    this.totalMs = totalMs;
    this.#startedAt = clock.now();
    this.#linked = timeoutSignal(
      clock,
      totalMs,
      new Interrupt("deadline", "deadline_exceeded", totalMs),
      caller,
    );
    this.signal = this.#linked.signal;
  }

  elapsedMs(): number {
    return this.#clock.now() - this.#startedAt;
  }

  remainingMs(): number {
    return Math.max(0, this.totalMs - this.elapsedMs());
  }

  /**
   * A signal for one stage. When the stage's own limit is the tighter one it fires with `reason`
   * (e.g. `handshake_timeout`); otherwise the deadline's own interrupt applies.
   */
  stage(limitMs: number | undefined, reason: string): LinkedSignal {
    if (limitMs === undefined || limitMs >= this.remainingMs()) return linkSignals(this.signal);
    return timeoutSignal(this.#clock, limitMs, new Interrupt("stage", reason, limitMs), this.signal);
  }

  /** Stops the timer and unhooks the caller's signal. Idempotent. */
  dispose(): void {
    this.#linked.dispose();
  }
}
