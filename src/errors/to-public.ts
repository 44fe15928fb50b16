import { RpcReplyError } from "../jsonrpc/messages.ts";
import { Interrupt } from "../lifecycle/interrupt.ts";
import { ByteCeilingExceeded } from "../transport/byte-budget.ts";
import { HttpRejection } from "../transport/http-rejection.ts";
import { httpStatusError, interruptError, limitError, remoteError, type Where } from "./failures.ts";
import { asTetherError, TetherError } from "./tether-error.ts";

/**
 * The public face of anything an operation threw: interrupts become cancellation or timeout,
 * the server's refusals become their codes, and anything unknown becomes `internal`. A
 * TetherError passes through unchanged, so a primary error keeps its identity.
 */
export function toPublicError(error: unknown, where: Where): TetherError {
  if (error instanceof TetherError) return error;
  if (error instanceof Interrupt) return interruptError(error, where);
  if (error instanceof RpcReplyError) {
    const e = remoteError(where, error.error.code, error.error.message, error.httpStatus);
    return e;
  }
  if (error instanceof HttpRejection) {
    return httpStatusError(
      where,
      error.status,
      error.rpc ? { code: error.rpc.code, message: error.rpc.message } : undefined,
    );
  }
  if (error instanceof ByteCeilingExceeded) {
    return limitError(
      where,
      "response_too_large",
      `the reply passed the ${error.maxBytes}-byte ceiling`,
      error.observedBytes,
      {
        maxBytes: error.maxBytes,
      },
    );
  }
  return asTetherError(error, where);
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
    attempt: error.attempt,
    cause: error,
    redactor: where.redactor,
  });
}
