/**
 * The one failure classifier. Every question the client asks about a failure is answered here,
 * from the failure's type, status and codes, never from message text: how it is reported (code,
 * reason), what it says about the server's era (N5), whether a fresh attempt may help (R4),
 * whether it proves a remembered era wrong (N7), and whether it is a transient refusal worth
 * waiting out (R7). Error projection, era detection, recovery and events all ask it, so one
 * failure gets one label wherever it is looked at. Pure; tested from a table (classify.test.ts).
 */
import { ByteCeilingExceeded } from "./byte-ceiling.ts";
import type { CancellationSource, ClosureCategory, ErrorCode } from "./codes.ts";
import { HttpRejection } from "./http-rejection.ts";
import { Interrupt } from "./interrupt.ts";
import { isModernRefusal, isModernRpcError, supportedVersionsOf } from "./rpc-codes.ts";
import { type RpcErrorObject, RpcReplyError } from "./rpc-reply-error.ts";
import { TetherError } from "./tether-error.ts";

/** What a failure says about the server's era (N5). */
export type EraSign =
  /** Only a modern server fails like this; `supported` when it named its versions (-32022). */
  | { era: "modern"; evidence: string; supported: readonly unknown[] | undefined; rpcCode?: number }
  /** A legacy server fails like this. `fresh`: the channel cannot be reused (stdio: silent or exited). */
  | { era: "legacy"; evidence: string; fresh: boolean; httpStatus?: number; rpcCode?: number }
  /** Nothing about the era: credentials, throttling, an outage, the deadline, the caller. */
  | { era: "none" };

/** Whether a fresh attempt may help (R4): never (`veto`), perhaps (`eligible`), or no word. */
export type RecoverySign =
  | { verdict: "veto"; why: string }
  | { verdict: "eligible"; why: string }
  | { verdict: "neutral" };

/** Everything the client decides about one failure. */
export interface FailureLabel {
  /** How it is reported: the public code and reason. */
  code: ErrorCode;
  reason: string;
  httpStatus: number | undefined;
  rpcCode: number | undefined;
  cancellation: CancellationSource | undefined;
  closure: ClosureCategory | undefined;
  /** Credentials, DNS, TLS, a refused redirect: a fresh attempt would meet the same refusal. */
  security: boolean;
  era: EraSign;
  recovery: RecoverySign;
  /**
   * Met while a remembered era was being used: the server is not what it was (it answered
   * differently, went silent, or dropped the connection), rather than down or refusing us.
   */
  disprovesHint: boolean;
  /** A throttled (429) or unavailable (503) answer that named its wait in Retry-After, in ms. */
  retryAfterMs: number | undefined;
}

/** HTTP statuses a legacy server answers a request it does not understand with (N5, R4). */
const ERA_STATUSES: ReadonlySet<number> = new Set([400, 404, 405]);

/** Codes that are never retried, whatever else the failure says. */
const VETO_CODES: ReadonlySet<ErrorCode> = new Set([
  "config",
  "unauthorized",
  "forbidden",
  "throttled",
  "internal",
  "cancelled",
]);

/** Reasons that are never retried: no later attempt could go differently, or time is up. */
const VETO_REASONS: ReadonlySet<string> = new Set(["deadline_exceeded", "version_mismatch", "dns", "tls"]);

/** Statuses that are never retried: credentials refused, or the server asked us to slow down. */
const VETO_STATUSES: ReadonlySet<number> = new Set([401, 403, 429]);

/** The error codes of TLS failures (handshake, certificates, OpenSSL). */
const TLS_CODE = /^(ERR_TLS|ERR_SSL|ERR_OSSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)|CERT/;

/** Whether an error code (`err.code`) names a TLS failure. */
export function isTlsCode(code: string | undefined): boolean {
  return code !== undefined && (TLS_CODE.test(code) || code === "EPROTO");
}

/** Whether an error code names a failed host-name lookup. */
export function isDnsCode(code: string | undefined): boolean {
  return code === "ENOTFOUND" || code === "EAI_AGAIN";
}

/** The errno-style code of a network error, looking through `cause` chains (fetch wraps them). */
export function errnoOf(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "ABORT_ERR" && !code.startsWith("UND_ERR_")) return code;
    if (typeof code === "string" && code === "UND_ERR_SOCKET") return "ECONNRESET";
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The label of a network failure, from its errno: `dns`, `tls`, `refused`, `reset` or `network`. */
export function networkLabel(errno: string | undefined): {
  reason: "dns" | "tls" | "refused" | "reset" | "network";
  security: boolean;
  closure: ClosureCategory | undefined;
} {
  if (isDnsCode(errno)) return { reason: "dns", security: true, closure: undefined };
  if (isTlsCode(errno)) return { reason: "tls", security: true, closure: undefined };
  if (errno === "ECONNREFUSED") return { reason: "refused", security: false, closure: undefined };
  if (errno === "ECONNRESET") return { reason: "reset", security: false, closure: "reset" };
  return { reason: "network", security: false, closure: undefined };
}

/** The label of an HTTP status that is a failure in itself (X4: 401, 403, 429 and 5xx stay distinct). */
function httpStatusLabel(
  status: number,
  rpc: Pick<RpcErrorObject, "code"> | undefined,
): { code: ErrorCode; reason: string; security: boolean } {
  const reason = `http_${status}`;
  if (status === 401) return { code: "unauthorized", reason, security: true };
  if (status === 403) return { code: "forbidden", reason, security: true };
  if (status === 429) return { code: "throttled", reason, security: false };
  if (status >= 500) return { code: "upstream", reason, security: false };
  return { code: rpc ? "remote_error" : "protocol", reason, security: false };
}

/** The label of an interrupted wait (E3, P7): caller cancellation, the overall deadline, or a stage's own limit. */
export function interruptLabel(interrupt: Interrupt): {
  code: ErrorCode;
  reason: string;
  cancellation: CancellationSource | undefined;
} {
  if (interrupt.kind === "caller") return { code: "cancelled", reason: "cancelled", cancellation: "caller" };
  if (interrupt.kind === "deadline")
    return { code: "timeout", reason: "deadline_exceeded", cancellation: "deadline" };
  // A stage's own limit is not a cancellation: only the caller and the overall deadline are.
  return { code: "timeout", reason: interrupt.reason, cancellation: undefined };
}

const NO_ERA: EraSign = { era: "none" };
const NEUTRAL: RecoverySign = { verdict: "neutral" };

/** The era a JSON-RPC error shows, wherever it arrived (in-band, or in a refused HTTP body). */
function rpcEra(rpc: RpcErrorObject, modernEvidence: string): EraSign {
  if (isModernRpcError(rpc.code, rpc.data))
    return {
      era: "modern",
      evidence: modernEvidence,
      supported: supportedVersionsOf(rpc.data),
      rpcCode: rpc.code,
    };
  // Legacy servers answer unknown pre-initialize requests with whatever they like: -32601,
  // -32602, -32000 (even inside an HTTP 200). Any non-modern error is legacy evidence.
  return { era: "legacy", evidence: "rpc_error", fresh: false, rpcCode: rpc.code };
}

/** Recovery's word on a failure already reported (a TetherError): from its code, reason and numbers. */
function recoveryOfReported(e: TetherError): RecoverySign {
  if (e.security) return { verdict: "veto", why: e.reason };
  if (VETO_CODES.has(e.code)) return { verdict: "veto", why: e.code };
  if (VETO_REASONS.has(e.reason)) return { verdict: "veto", why: e.reason };
  if (isModernRefusal(e.rpcCode)) return { verdict: "veto", why: `rpc_${e.rpcCode}` };
  if (e.httpStatus !== undefined && VETO_STATUSES.has(e.httpStatus))
    return { verdict: "veto", why: `http_${e.httpStatus}` };
  if (
    e.code === "connection" &&
    (e.closure === "eof" || e.closure === "process_exit" || e.closure === "reset")
  )
    return { verdict: "eligible", why: `closed_${e.closure}` };
  if (e.code === "connection" && (e.reason === "reset" || e.reason === "session_expired"))
    return { verdict: "eligible", why: e.reason };
  if (e.reason === "handshake_timeout" || e.reason === "probe_timeout")
    return { verdict: "eligible", why: e.reason };
  return NEUTRAL;
}

function ofReported(e: TetherError): FailureLabel {
  const exited = e.code === "connection" && (e.closure === "process_exit" || e.closure === "eof");
  // Some legacy stdio servers exit on any request before initialize. One that exited with a
  // failure status before answering anything is broken instead: nothing about its era, and
  // starting it again for another era would only repeat its death.
  const era: EraSign =
    exited && !e.failedAtStart ? { era: "legacy", evidence: "exited", fresh: true } : NO_ERA;
  return {
    code: e.code,
    reason: e.reason,
    httpStatus: e.httpStatus,
    rpcCode: e.rpcCode,
    cancellation: e.cancellation,
    closure: e.closure,
    security: e.security,
    era,
    recovery: recoveryOfReported(e),
    disprovesHint:
      era.era !== "none" ||
      (e.code === "connection" && e.reason !== "refused" && !e.security && !e.failedAtStart),
    retryAfterMs: undefined,
  };
}

function ofInterrupt(i: Interrupt): FailureLabel {
  return {
    ...interruptLabel(i),
    httpStatus: undefined,
    rpcCode: undefined,
    closure: undefined,
    security: false,
    // A silent probe is legacy evidence on stdio (the caller decides where silence counts); the
    // process may still answer it, so it is not reused (N6).
    era: i.kind === "stage" ? { era: "legacy", evidence: "silent", fresh: true } : NO_ERA,
    recovery:
      i.kind === "caller"
        ? { verdict: "veto", why: "cancelled" }
        : i.kind === "deadline"
          ? { verdict: "veto", why: "deadline" }
          : NEUTRAL,
    disprovesHint: i.kind === "stage",
    retryAfterMs: undefined,
  };
}

function ofRpcReply(e: RpcReplyError): FailureLabel {
  const code = e.error.code;
  return {
    code: "remote_error",
    reason: "rpc_error",
    httpStatus: e.httpStatus,
    rpcCode: code,
    cancellation: undefined,
    closure: undefined,
    security: false,
    era: rpcEra(e.error, `rpc_${code}`),
    recovery: isModernRefusal(code) ? { verdict: "veto", why: `rpc_${code}` } : NEUTRAL,
    disprovesHint: true,
    retryAfterMs: undefined,
  };
}

function ofHttpRejection(e: HttpRejection): FailureLabel {
  const status = e.status;
  const modern = e.rpc !== undefined && isModernRpcError(e.rpc.code, e.rpc.data);
  const era: EraSign =
    e.rpc && modern
      ? rpcEra(e.rpc, `http_${status}_rpc_${e.rpc.code}`)
      : ERA_STATUSES.has(status)
        ? {
            era: "legacy",
            evidence: `http_${status}_${e.bodyKind}`,
            fresh: false,
            httpStatus: status,
            rpcCode: e.rpc?.code,
          }
        : NO_ERA;
  const recovery: RecoverySign = VETO_STATUSES.has(status)
    ? { verdict: "veto", why: `http_${status}` }
    : isModernRefusal(e.rpc?.code)
      ? { verdict: "veto", why: `rpc_${e.rpc?.code}` }
      : era.era === "legacy"
        ? { verdict: "eligible", why: `http_${status}` }
        : NEUTRAL;
  return {
    ...httpStatusLabel(status, e.rpc),
    httpStatus: status,
    rpcCode: e.rpc?.code,
    cancellation: undefined,
    closure: undefined,
    era,
    recovery,
    disprovesHint: era.era !== "none",
    retryAfterMs: status === 429 || status === 503 ? e.retryAfterMs : undefined,
  };
}

/** A failure of a kind the client did not make: reported as `internal`; its errno still decides recovery. */
function ofUnknown(error: unknown): FailureLabel {
  const errno = errnoOf(error);
  const network = networkLabel(errno);
  const recovery: RecoverySign =
    network.reason === "dns" || network.reason === "tls"
      ? { verdict: "veto", why: network.reason }
      : errno === "ECONNRESET" || errno === "EPIPE"
        ? { verdict: "eligible", why: "reset" }
        : NEUTRAL;
  return {
    code: "internal",
    reason: "unexpected",
    httpStatus: undefined,
    rpcCode: undefined,
    cancellation: undefined,
    closure: undefined,
    security: false,
    era: NO_ERA,
    recovery,
    disprovesHint: false,
    retryAfterMs: undefined,
  };
}

/** Labels one failure: a TetherError by its own fields, anything else by its type, status and codes. */
export function classifyFailure(error: unknown): FailureLabel {
  if (error instanceof TetherError) return ofReported(error);
  if (error instanceof Interrupt) return ofInterrupt(error);
  if (error instanceof RpcReplyError) return ofRpcReply(error);
  if (error instanceof HttpRejection) return ofHttpRejection(error);
  if (error instanceof ByteCeilingExceeded)
    return { ...ofUnknown(undefined), code: "limit", reason: "response_too_large" };
  return ofUnknown(error);
}
