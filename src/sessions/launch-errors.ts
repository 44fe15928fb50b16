/** The failures of reaching, starting or waiting on the session daemon, in our own words. */
import { interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { TetherError } from "../errors/tether-error.ts";
import { CLEANUP_GRACE_MS } from "../transport/grace.ts";

/**
 * Past its own budget, how long a command waits for the daemon's answer before it gives up on
 * its own: the daemon's client settles first unless the daemon itself is stuck.
 */
export const LOCAL_GRACE_MS = 2 * CLEANUP_GRACE_MS + 1_000;

export function connectionErrorFor(
  what: "cancelled" | "unreachable" | "no_daemon" | "spawn",
  cause?: unknown,
): TetherError {
  if (what === "cancelled")
    return interruptError(new Interrupt("caller", "cancelled", undefined, cause), {
      stage: "config",
      phase: "discovery",
    });
  const message = {
    unreachable: "the session process could not be reached",
    no_daemon: "the session process did not start",
    spawn: "the session process could not be started",
  }[what];
  return new TetherError({
    code: "connection",
    reason: what === "unreachable" ? "refused" : "daemon_failed",
    stage: what === "spawn" ? "spawn" : "config",
    phase: "discovery",
    message,
    cause,
  });
}

/** The session process took the connection but did not answer in time (stopped, or stuck). */
export function unanswered(withinMs: number): TetherError {
  return new TetherError({
    code: "timeout",
    reason: "deadline_exceeded",
    stage: "config",
    phase: "discovery",
    message: `the session process did not answer within ${withinMs} ms`,
    limits: { timeoutMs: withinMs },
  });
}

/** A command's request cancelled by its caller (Ctrl-C) and not answered within the grace. */
export function cancelled(reason: unknown): TetherError {
  return interruptError(new Interrupt("caller", "cancelled", undefined, reason), {
    stage: "call",
    phase: "call",
    effect: "unknown",
  });
}

/** The daemon did not answer a command's request within its budget and the grace. */
export function stuck(budgetMs: number): TetherError {
  return new TetherError({
    code: "timeout",
    reason: "deadline_exceeded",
    stage: "call",
    phase: "call",
    message: `the session process did not answer within the ${budgetMs} ms call budget`,
    limits: { timeoutMs: budgetMs },
    effect: "unknown",
  });
}
