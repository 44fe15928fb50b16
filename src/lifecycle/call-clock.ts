import { Interrupt } from "../errors/interrupt.ts";
import type { Clock } from "./clock.ts";

/**
 * The time budget of one operation. Its signal aborts when the operation has been idle for
 * `idleMs` (progress notifications restart that clock, when allowed) or when `maxMs` has passed
 * in all, whichever comes first, or when the caller's signal aborts. Nothing extends `maxMs`.
 */
export class CallClock {
  readonly signal: AbortSignal;
  readonly idleMs: number;
  readonly maxMs: number;
  readonly #clock: Clock;
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort: (() => void) | undefined;
  #idleTimer: unknown;
  readonly #maxTimer: unknown;

  /**
   * One controller per operation (calls are a hot path): the caller's signal, if any, is linked
   * in with one listener; its reason becomes a caller Interrupt unless it already is one.
   */
  constructor(clock: Clock, idleMs: number, maxMs: number, caller?: AbortSignal) {
    this.#clock = clock;
    this.idleMs = Math.min(idleMs, maxMs);
    this.maxMs = maxMs;
    this.signal = this.#controller.signal;
    if (caller) {
      const onAbort = () =>
        this.#expire(
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
    this.#idleTimer = clock.setTimeout(
      () => this.#expire(new Interrupt("deadline", "deadline_exceeded", this.idleMs)),
      this.idleMs,
    );
    this.#maxTimer =
      maxMs > this.idleMs
        ? clock.setTimeout(() => this.#expire(new Interrupt("stage", "max_total_timeout", maxMs)), maxMs)
        : undefined;
  }

  /** Restarts the idle clock (on progress). The total limit still holds. */
  touch(): void {
    if (this.signal.aborted) return;
    this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = this.#clock.setTimeout(
      () => this.#expire(new Interrupt("deadline", "deadline_exceeded", this.idleMs)),
      this.idleMs,
    );
  }

  #expire(interrupt: Interrupt): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(interrupt);
  }

  dispose(): void {
    this.#clock.clearTimeout(this.#idleTimer);
    if (this.#maxTimer !== undefined) this.#clock.clearTimeout(this.#maxTimer);
    if (this.#caller && this.#onCallerAbort) this.#caller.removeEventListener("abort", this.#onCallerAbort);
  }
}
