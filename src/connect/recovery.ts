import { classifyFailure, type RecoverySign } from "../errors/classify.ts";
import { TetherError } from "../errors/tether-error.ts";

export type Verdict = { eligible: true; why: string } | { eligible: false; why: string };

/** Every member of a cause tree: `cause` chains and aggregates, breadth first, bounded. */
export function causeTree(error: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [error];
  const seen = new Set<unknown>();
  while (queue.length > 0 && out.length < 64) {
    const e = queue.shift();
    if (e === undefined || e === null || seen.has(e)) continue;
    seen.add(e);
    out.push(e);
    if (e instanceof AggregateError) queue.push(...e.errors);
    if (typeof e === "object" && "cause" in e) queue.push((e as { cause?: unknown }).cause);
    if (e instanceof TetherError) queue.push(...e.laterFailures);
  }
  return out;
}

/**
 * The default verdict, over the whole cause tree (R5): each member is labelled by the failure
 * classifier (src/errors/classify.ts), or vetoed by the application's `isSecurityError`; one
 * vetoing member makes the failure ineligible wherever it stands; otherwise it is eligible only if
 * some member is. Pure, and it never reads a message.
 */
export function classifyForRecovery(error: unknown, isSecurityError?: (error: unknown) => boolean): Verdict {
  const signs: RecoverySign[] = [];
  for (const member of causeTree(error)) {
    if (markedBy(member, isSecurityError)) return { eligible: false, why: "application_security" };
    const sign = classifyFailure(member).recovery;
    if (sign.verdict === "veto") return { eligible: false, why: sign.why };
    signs.push(sign);
  }
  for (const sign of signs) if (sign.verdict === "eligible") return { eligible: true, why: sign.why };
  return { eligible: false, why: "not_transient" };
}

/** Whether the application marks this member as its own security failure; a hook that throws marks it too. */
function markedBy(member: unknown, isSecurityError: ((error: unknown) => boolean) | undefined): boolean {
  try {
    return Boolean(isSecurityError?.(member));
  } catch {
    return true;
  }
}

/**
 * Whether a failure is fatal in the sense of C6: no later attempt could have gone differently
 * (credentials refused, a version mismatch, a modern refusal, configuration, DNS or TLS, an
 * internal fault, or what the application marks as its own security failure). The overall
 * deadline and throttling are not: they say when recovery stopped, not what was wrong.
 */
export function isFatal(failure: TetherError, isSecurityError?: (error: unknown) => boolean): boolean {
  const verdict = classifyForRecovery(failure, isSecurityError);
  return !verdict.eligible && !NOT_FATAL.has(verdict.why);
}

/** Reasons a failure is ineligible that say nothing about what went wrong on the server's side. */
const NOT_FATAL: ReadonlySet<string> = new Set([
  "not_transient",
  "cancelled",
  "deadline",
  "deadline_exceeded",
  "throttled",
  "http_429",
]);

/**
 * Which failure to report, per C6: caller cancellation first, then a fatal failure (the one that
 * stopped recovery, on whichever attempt it came), then the first attempt's failure. Identity is
 * kept: the chosen error is one of those given.
 */
export function primaryOf(
  failures: TetherError[],
  isSecurityError?: (error: unknown) => boolean,
): TetherError {
  return (
    failures.find((f) => f.code === "cancelled" && f.cancellation === "caller") ??
    failures.find((f) => isFatal(f, isSecurityError)) ??
    failures[0]!
  );
}
