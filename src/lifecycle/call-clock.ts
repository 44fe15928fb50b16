import { Interrupt } from "../errors/interrupt.ts";
import { Cancellation } from "./cancellation.ts";
import type { Clock } from "./clock.ts";

/**
 * The time budget of one operation. It aborts when the operation has been idle for `idleMs`
 * (progress notifications restart that clock, when allowed) or when `maxMs` has passed in all,
 * whichever comes first, or when the caller's signal aborts. Nothing extends `maxMs`.
 *
 * Calls are the hot path, so the budget is a `Cancellation` (no EventTarget): the slot queue and
 * the session's pending entry listen on `cancellation`, and `signal` makes an AbortSignal only
 * for code that needs one.
 */
export class CallClock {
  readonly idleMs: number;
  readonly maxMs: number;
  /** Aborts with the Interrupt that ended the budget (deadline, total limit, or the caller). */
  readonly cancellation = new Cancellation();
  readonly #clock: Clock;
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort: (() => void) | undefined;
  #idleTimer: unknown;
  readonly #maxTimer: unknown;

  /**
   * The caller's signal, if any, is linked in with one listener; its reason becomes a caller
   * Interrupt unless it already is one (a deadline's signal handed down passes through as is).
   */
  constructor(clock: Clock, idleMs: number, maxMs: number, caller?: AbortSignal) {
    this.#clock = clock;
    this.idleMs = Math.min(idleMs, maxMs);
    this.maxMs = maxMs;
    if (caller) {
      const onAbort = () =>
        this.cancellation.abort(
          caller.reason instanceof Interrupt
            ? caller.reason
            : new Interrupt("caller", "cancelled", undefined, caller.reason),
        );
      if (caller.aborted) onAbort();
      else {
        this.#caller = caller;
        this.#onCallerAbort = onAbort;
        caller.addEventListener("abort", onAbort, { once: true });
      }
    }
    this.#idleTimer = clock.setTimeout(this.#idleExpired, this.idleMs);
    this.#maxTimer =
      maxMs > this.idleMs
        ? clock.setTimeout(
            () => this.cancellation.abort(new Interrupt("stage", "max_total_timeout", maxMs)),
            maxMs,
          )
        : undefined;
  }

  /**
   * An AbortSignal for the budget, made on first read: for waits that need a real one (a nested
   * operation's caller signal, a handler, a fetch). The call path itself uses `cancellation`.
   */
  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  /** Restarts the idle clock (on progress). The total limit still holds. */
  touch(): void {
    if (this.cancellation.aborted) return;
    this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = this.#clock.setTimeout(this.#idleExpired, this.idleMs);
  }

  /** One function per clock for its idle timer, however often progress restarts it. */
  readonly #idleExpired = () =>
    this.cancellation.abort(new Interrupt("deadline", "deadline_exceeded", this.idleMs));

  dispose(): void {
    this.#clock.clearTimeout(this.#idleTimer);
    if (this.#maxTimer !== undefined) this.#clock.clearTimeout(this.#maxTimer);
    if (this.#caller && this.#onCallerAbort) this.#caller.removeEventListener("abort", this.#onCallerAbort);
  }
}
