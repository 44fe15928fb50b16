/** The failures of reaching or starting the session daemon, in our own words. */
import { interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { TetherError } from "../errors/tether-error.ts";

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
