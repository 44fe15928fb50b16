import type { CancellationSource, ClosureCategory, ErrorCode, Stage } from "../errors/codes.ts";
import { errnoOf, isDnsCode, isTlsCode } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import { RpcReplyError } from "../jsonrpc/messages.ts";
import { Interrupt } from "../lifecycle/interrupt.ts";
import { HttpRejection } from "../transport/http-rejection.ts";
import type { Era, TransportMode } from "../transport/transport.ts";

/** What the policy is told about a failed attempt: structured and payload-free. */
export interface AttemptFailure {
  attempt: number;
  stage: Stage;
  code: ErrorCode;
  reason: string;
  mode: TransportMode;
  era: Era | undefined;
  httpStatus: number | undefined;
  rpcCode: number | undefined;
  closure: ClosureCategory | undefined;
  cancellation: CancellationSource | undefined;
  elapsedMs: number;
  /** Whether the default classification found this failure eligible for a fresh attempt. */
  eligible: boolean;
}

/**
 * Opt-in recovery of a failed establishment by fresh attempts. Without it there is exactly one
 * attempt. The hooks can only narrow: an ineligible failure is never retried.
 */
export interface RecoveryPolicy {
  /** Attempts in all, the first included (1 to 10). */
  maxAttempts: number;
  /** Pause before the second attempt in ms, doubling after (default 100, max 10000). */
  backoffMs?: number;
  /** May veto a fresh attempt for an eligible failure; it is never asked about an ineligible one. */
  shouldRetry?: (failure: AttemptFailure) => boolean | Promise<boolean>;
  /** Marks the application's own security failures (e.g. thrown by a custom fetch): never retried. */
  isSecurityError?: (error: unknown) => boolean;
}

/** Opt-in retry of throttling (429) and unavailability (503) that named a Retry-After, during establishment only. */
export interface TransientRetryPolicy {
  /** Retries in all, across the establishment (1 to 10). */
  maxRetries: number;
}

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

/** Why one member of the tree forbids a fresh attempt, or undefined if it does not. */
function veto(e: unknown, isSecurityError: ((error: unknown) => boolean) | undefined): string | undefined {
  try {
    if (isSecurityError?.(e)) return "application_security";
  } catch {
    return "application_security";
  }
  if (e instanceof Interrupt)
    return e.kind === "caller" ? "cancelled" : e.kind === "deadline" ? "deadline" : undefined;
  if (e instanceof HttpRejection) {
    if (e.status === 401 || e.status === 403 || e.status === 429) return `http_${e.status}`;
    if (e.rpc && (e.rpc.code === -32020 || e.rpc.code === -32021)) return `rpc_${e.rpc.code}`;
    return undefined;
  }
  if (e instanceof RpcReplyError)
    return e.error.code === -32020 || e.error.code === -32021 ? `rpc_${e.error.code}` : undefined;
  if (e instanceof TetherError) {
    if (e.security) return e.reason;
    if (["config", "unauthorized", "forbidden", "throttled", "internal", "cancelled"].includes(e.code))
      return e.code;
    if (
      e.reason === "deadline_exceeded" ||
      e.reason === "version_mismatch" ||
      e.reason === "dns" ||
      e.reason === "tls"
    )
      return e.reason;
    if (e.rpcCode === -32020 || e.rpcCode === -32021) return `rpc_${e.rpcCode}`;
    if (e.httpStatus === 401 || e.httpStatus === 403 || e.httpStatus === 429) return `http_${e.httpStatus}`;
    return undefined;
  }
  const code = errnoOf(e);
  if (isDnsCode(code)) return "dns";
  if (isTlsCode(code)) return "tls";
  return undefined;
}

/** Whether one member says a fresh attempt may help. */
function eligibleMember(e: unknown): string | undefined {
  if (e instanceof TetherError) {
    if (
      e.code === "connection" &&
      (e.closure === "eof" || e.closure === "process_exit" || e.closure === "reset")
    )
      return `closed_${e.closure}`;
    if (e.code === "connection" && e.reason === "reset") return "reset";
    if (e.reason === "handshake_timeout" || e.reason === "probe_timeout") return e.reason;
    if (e.code === "protocol" && e.reason === "no_usable_transport") return undefined;
    if (e.code === "connection" && e.reason === "session_expired") return "session_expired";
  }
  if (e instanceof HttpRejection && (e.status === 400 || e.status === 404 || e.status === 405))
    return `http_${e.status}`;
  const code = errnoOf(e);
  if (code === "ECONNRESET" || code === "EPIPE") return "reset";
  return undefined;
}

/**
 * The default classification, over the whole cause tree: one vetoing member makes the failure
 * ineligible wherever it stands; otherwise it is eligible only if some member is. Pure, and it
 * never reads a message.
 */
export function classifyForRecovery(error: unknown, isSecurityError?: (error: unknown) => boolean): Verdict {
  const tree = causeTree(error);
  for (const member of tree) {
    const v = veto(member, isSecurityError);
    if (v) return { eligible: false, why: v };
  }
  for (const member of tree) {
    const ok = eligibleMember(member);
    if (ok) return { eligible: true, why: ok };
  }
  return { eligible: false, why: "not_transient" };
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
