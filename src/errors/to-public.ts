import { ByteCeilingExceeded } from "./byte-ceiling.ts";
import { classifyFailure } from "./classify.ts";
import { interruptError, type Where } from "./failures.ts";
import { HttpRejection } from "./http-rejection.ts";
import { Interrupt } from "./interrupt.ts";
import { baseRedactor } from "./redact.ts";
import { RpcReplyError } from "./rpc-reply-error.ts";
import { asTetherError, TetherError } from "./tether-error.ts";
import { requiredUrlElicitations } from "./url-elicitation.ts";

/** Our words for an HTTP status that is a failure in itself; never the server's. */
function httpWords(code: string, status: number, rpcCode: number | undefined): string {
  if (code === "unauthorized") return "the server requires authorization (HTTP 401)";
  if (code === "forbidden") return "the server refused access (HTTP 403)";
  if (code === "throttled") return "the server is throttling requests (HTTP 429)";
  if (code === "upstream") return `the server failed (HTTP ${status})`;
  return `the server answered HTTP ${status}${rpcCode === undefined ? "" : ` with JSON-RPC error ${rpcCode}`}`;
}

/**
 * The public face of anything an operation threw: the label the classifier gives it
 * (classify.ts), in our own words; the server's own error text goes to `rpcMessage`. A
 * TetherError passes through unchanged, so a failure labelled where it was first seen keeps its
 * label and its identity.
 */
export function toPublicError(error: unknown, where: Where): TetherError {
  if (error instanceof TetherError) return error;
  if (error instanceof Interrupt) return interruptError(error, where);
  if (
    !(
      error instanceof RpcReplyError ||
      error instanceof HttpRejection ||
      error instanceof ByteCeilingExceeded
    )
  )
    return asTetherError(error, where);
  const label = classifyFailure(error);
  const labelled = {
    ...where,
    code: label.code,
    reason: label.reason,
    httpStatus: label.httpStatus,
    rpcCode: label.rpcCode,
    security: label.security,
  };
  if (error instanceof RpcReplyError) {
    const text = error.error.message;
    return new TetherError({
      ...labelled,
      rpcMessage: typeof text === "string" ? text : undefined,
      message: `the server answered with JSON-RPC error ${error.error.code}`,
      urlElicitations: requiredUrlElicitations(
        error.error.code,
        error.error.data,
        where.redactor ?? baseRedactor,
      ),
    });
  }
  if (error instanceof HttpRejection) {
    return new TetherError({
      ...labelled,
      rpcMessage: error.rpc?.message,
      message: httpWords(label.code, error.status, error.rpc?.code),
    });
  }
  return new TetherError({
    ...labelled,
    message: `the reply passed the ${error.maxBytes}-byte ceiling`,
    observedBytes: error.observedBytes,
    limits: { maxBytes: error.maxBytes },
  });
}

/**
 * The same failure attributed to a call: a new error (its own stage, phase and effect) whose
 * cause is the original, so one shared closure error is never mutated per caller. A call whose
 * effect would be `unknown` keeps `done` when the failure itself proves the server answered
 * with a result (a reply that arrived and was refused).
 */
export function forCall(error: TetherError, where: Where): TetherError {
  const effect = where.effect === "unknown" && error.effect === "done" ? "done" : where.effect;
  if (error.stage === where.stage && error.phase === where.phase && error.effect === effect) return error;
  return new TetherError({
    code: error.code,
    reason: error.reason,
    stage: where.stage,
    phase: where.phase,
    message: error.message,
    limits: error.limits,
    observedBytes: error.observedBytes,
    httpStatus: error.httpStatus,
    rpcCode: error.rpcCode,
    rpcMessage: error.rpcMessage,
    effect,
    closure: error.closure,
    cancellation: error.cancellation,
    security: error.security,
    stderrTail: error.stderrTail,
    failedAtStart: error.failedAtStart,
    urlElicitations: error.urlElicitations,
    attempt: error.attempt,
    cause: error,
    redactor: where.redactor,
  });
}
