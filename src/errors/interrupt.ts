import type { CancellationSource } from "./codes.ts";

/**
 * Why a wait was interrupted. Used as the `reason` of the signals we abort, so whoever catches the
 * abort can tell caller cancellation, the overall deadline and a stage's own limit apart without
 * looking at any message.
 */
export class Interrupt {
  constructor(
    readonly kind: "caller" | "deadline" | "stage",
    /** For `stage`: the timeout reason to report (e.g. `probe_timeout`, `handshake_timeout`). */
    readonly reason: string,
    /** The limit that ran out, in ms, for `deadline` and `stage`. */
    readonly limitMs?: number,
    /** For `caller`: the caller's own abort reason, kept as the error's cause. */
    readonly callerReason?: unknown,
  ) {}

  get source(): CancellationSource {
    return this.kind === "caller" ? "caller" : "deadline";
  }
}

export function interruptOf(signal: AbortSignal | undefined): Interrupt | undefined {
  if (!signal?.aborted) return undefined;
  const reason: unknown = signal.reason;
  return reason instanceof Interrupt ? reason : new Interrupt("caller", "cancelled", undefined, reason);
}
