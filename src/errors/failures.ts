/**
 * Factories for the failures the client states itself (a closed channel, a limit, a protocol
 * violation, an interrupted wait, a network failure). Where a label depends on what was met (an
 * interrupt's kind, an errno) it comes from the classifier (classify.ts); the words are written
 * here, from our own words and numbers only. What a server refused with (an HTTP status, a
 * JSON-RPC error) is projected by to-public.ts. Server text goes to `rpcMessage`, redacted and
 * truncated by the constructor.
 */

import { errnoOf, interruptLabel, networkLabel } from "./classify.ts";
import type { CallEffect, ClosureCategory, Phase, RedirectReason, Stage } from "./codes.ts";
import { Interrupt } from "./interrupt.ts";
import { baseRedactor, type Redactor } from "./redact.ts";
import { type Limits, TetherError } from "./tether-error.ts";

export interface Where {
  stage: Stage;
  phase: Phase;
  redactor?: Redactor;
  limits?: Limits;
  effect?: CallEffect;
}

const STAGE_WORDS: Record<Stage, string> = {
  config: "configuration",
  spawn: "server process start",
  http_request: "HTTP response",
  sse_endpoint: "endpoint event",
  probe: "server/discover reply",
  initialize: "initialize reply",
  initialized: "initialized notification",
  list_tools: "tools/list reply",
  call: "reply",
  close: "shutdown",
};

/** The error for an interrupted wait: caller cancellation, the overall deadline, or a stage's limit. */
export function interruptError(interrupt: Interrupt, where: Where): TetherError {
  const label = interruptLabel(interrupt);
  if (interrupt.kind === "caller") {
    return new TetherError({
      ...where,
      ...label,
      message: `cancelled by the caller during ${where.stage}`,
      cause: interrupt.callerReason,
    });
  }
  const ms = interrupt.limitMs ?? 0;
  const budget =
    interrupt.kind === "deadline" ? `${where.phase} budget` : `${label.reason.replace(/_/g, " ")} limit`;
  return new TetherError({
    ...where,
    ...label,
    message: `no ${STAGE_WORDS[where.stage]} within the ${ms} ms ${budget}`,
    limits: where.limits ?? { timeoutMs: ms },
  });
}

/** Turns whatever an aborted wait threw into the right failure; anything else passes through `other`. */
export function failureFrom(error: unknown, where: Where, other: (e: unknown) => TetherError): TetherError {
  if (error instanceof TetherError) return error;
  if (error instanceof Interrupt) return interruptError(error, where);
  return other(error);
}

export function closedError(
  where: Where,
  closure: ClosureCategory,
  detail: string,
  cause?: unknown,
  extra: { httpStatus?: number; stderrTail?: string; failedAtStart?: boolean } = {},
): TetherError {
  return new TetherError({
    ...where,
    code: "connection",
    reason: closure === "session_expired" ? "session_expired" : "closed",
    closure,
    message: detail,
    cause,
    ...extra,
  });
}

export function protocolError(where: Where, reason: string, message: string, cause?: unknown): TetherError {
  return new TetherError({ ...where, code: "protocol", reason, message, cause });
}

/**
 * A reply nested deeper than the client admits (`too_deep`). It arrived, so the failure is the
 * server's message, not the channel: a result means the request ran (`done`), an error leaves
 * the effect to whoever reports the request.
 */
export function tooDeepError(where: Where, maxJsonDepth: number, answered: "result" | "error"): TetherError {
  return new TetherError({
    ...where,
    code: "protocol",
    reason: "too_deep",
    message: `the server's reply was nested more than ${maxJsonDepth} levels deep`,
    limits: { maxJsonDepth },
    effect: answered === "result" ? "done" : where.effect,
  });
}

export function configError(reason: string, message: string, cause?: unknown): TetherError {
  return new TetherError({ code: "config", reason, stage: "config", phase: "discovery", message, cause });
}

export function limitError(
  where: Where,
  reason: string,
  message: string,
  observedBytes: number | undefined,
  limits: Limits,
): TetherError {
  return new TetherError({ ...where, code: "limit", reason, message, observedBytes, limits });
}

/**
 * A redirect the fetch policy would not follow (another origin, a non-HTTP(S) target, no usable
 * Location, a method change, too many hops). Nothing was sent to the target, and the message
 * names neither address. A security failure: a fresh attempt would be redirected the same way.
 */
export function redirectError(
  where: Where,
  reason: RedirectReason,
  message: string,
  httpStatus: number,
): TetherError {
  return new TetherError({ ...where, code: "connection", reason, message, httpStatus, security: true });
}

/** Network-level failures of fetch: refused, reset, DNS, TLS. Never looks at message text. */
export function networkError(where: Where, cause: unknown): TetherError {
  const label = networkLabel(errnoOf(cause));
  const words: Record<typeof label.reason, string> = {
    dns: "the server's host name could not be resolved",
    tls: "the TLS connection to the server failed",
    refused: "the server refused the connection",
    reset: "the connection was reset",
    network: "the connection to the server failed",
  };
  return new TetherError({
    ...where,
    code: "connection",
    ...label,
    message: words[label.reason],
    cause,
  });
}

/**
 * Why authorization failed: `login_required` (no usable token and no flow allowed), `no_metadata`,
 * `bad_metadata`, `resource_mismatch`, `pkce_unsupported`, `insecure_endpoint`, `no_client`,
 * `registration_failed`, `denied`, `state_mismatch`, `issuer_mismatch`, `invalid_grant`, `invalid_client`,
 * `token_error`, `expired`, `token_rejected`, `insufficient_scope`.
 */
export type AuthReason =
  | "login_required"
  | "no_metadata"
  | "bad_metadata"
  | "resource_mismatch"
  | "pkce_unsupported"
  | "insecure_endpoint"
  | "no_client"
  | "registration_failed"
  | "denied"
  | "state_mismatch"
  | "issuer_mismatch"
  | "invalid_grant"
  | "invalid_client"
  | "token_error"
  | "expired"
  | "token_rejected"
  | "insufficient_scope";

/**
 * An authorization failure: `forbidden` when access was refused (the user denied it, or the
 * scopes can never be enough), `unauthorized` otherwise. Always a security failure, so recovery
 * never retries it. Where it happened inside a request is the HTTP request; a call re-attributes
 * it to its own stage.
 */
export function authError(
  reason: AuthReason,
  message: string,
  options: { redactor?: Redactor; httpStatus?: number; cause?: unknown } = {},
): TetherError {
  return new TetherError({
    code: reason === "denied" || reason === "insufficient_scope" ? "forbidden" : "unauthorized",
    reason,
    stage: "http_request",
    phase: "discovery",
    message,
    security: true,
    httpStatus: options.httpStatus,
    redactor: options.redactor,
    cause: options.cause === undefined ? undefined : scrubbedCause(options.cause, options.redactor),
  });
}

/**
 * A lower layer's error reduced to its name, code and scrubbed message. OAuth libraries attach
 * response bodies (tokens among them) to their errors; those never travel as our cause.
 */
export function scrubbedCause(error: unknown, redactor?: Redactor): Error {
  if (!(error instanceof Error)) return new Error(typeof error === "string" ? "error" : typeof error);
  const out = new Error((redactor ?? baseRedactor).scrub(error.message).slice(0, 300));
  out.name = error.name;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") (out as Error & { code?: string }).code = code;
  return out;
}
