import { TetherError } from "../errors/tether-error.ts";
import { RpcReplyError } from "../jsonrpc/messages.ts";
import { Interrupt } from "../lifecycle/interrupt.ts";
import { HttpRejection } from "../transport/http-rejection.ts";

/** Modern errors that only a 2026-07-28 server sends: the server is modern whatever else went wrong. */
export const UNSUPPORTED_VERSION = -32022;
export const MISSING_CAPABILITY = -32021;
export const HEADER_MISMATCH = -32020;

/** What one probe (or a handshake reply) says about the server's era. */
export type EraEvidence =
  /** A modern server; `supported` when it named its versions (a result or -32022). */
  | { era: "modern"; evidence: string; supported: readonly unknown[] | undefined; rpcCode?: number }
  /** A legacy server. `fresh`: the channel cannot be reused (stdio: silent or exited). */
  | { era: "legacy"; evidence: string; fresh: boolean; httpStatus?: number; rpcCode?: number }
  /** Nothing about the era: the failure stands (credentials, throttling, outage, deadline, caller). */
  | { era: "none" };

function supportedOf(data: unknown): readonly unknown[] | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const supported = (data as { supported?: unknown }).supported;
  return Array.isArray(supported) ? supported : undefined;
}

/** A JSON-RPC error that only a modern server sends. */
export function isModernError(code: number, data: unknown): boolean {
  if (code === UNSUPPORTED_VERSION) return supportedOf(data) !== undefined;
  return code === MISSING_CAPABILITY || code === HEADER_MISMATCH;
}

/**
 * Classifies the outcome of a `server/discover` probe, per the spec's dual-era rules. Pure: it
 * looks at statuses, codes and body kinds, never at message text.
 */
export function classifyProbe(
  outcome: { result: Record<string, unknown> } | { error: unknown },
): EraEvidence {
  if ("result" in outcome) {
    const versions = outcome.result.supportedVersions;
    // A result without supportedVersions is no DiscoverResult: some legacy servers answer every
    // method with an empty result. Legacy, and the channel is fine to reuse.
    if (!Array.isArray(versions)) return { era: "legacy", evidence: "not_a_discover_result", fresh: false };
    return { era: "modern", evidence: "discover_result", supported: versions };
  }
  const error = outcome.error;
  if (error instanceof RpcReplyError) {
    const { code, data } = error.error;
    if (isModernError(code, data))
      return { era: "modern", evidence: `rpc_${code}`, supported: supportedOf(data), rpcCode: code };
    // Legacy servers answer unknown pre-initialize requests with whatever they like: -32601,
    // -32602, -32000 (even inside an HTTP 200). Any non-modern error is legacy evidence.
    return { era: "legacy", evidence: "rpc_error", fresh: false, rpcCode: code };
  }
  if (error instanceof HttpRejection) {
    if (error.rpc && isModernError(error.rpc.code, error.rpc.data)) {
      return {
        era: "modern",
        evidence: `http_${error.status}_rpc_${error.rpc.code}`,
        supported: supportedOf(error.rpc.data),
        rpcCode: error.rpc.code,
      };
    }
    if (error.status === 400 || error.status === 404 || error.status === 405) {
      return {
        era: "legacy",
        evidence: `http_${error.status}_${error.bodyKind}`,
        fresh: false,
        httpStatus: error.status,
        rpcCode: error.rpc?.code,
      };
    }
    // 401, 403, 429, 5xx and other statuses say nothing about the era.
    return { era: "none" };
  }
  if (error instanceof Interrupt) {
    // A silent stdio probe is legacy evidence; the process may still answer it, so it is not reused.
    return error.kind === "stage" ? { era: "legacy", evidence: "silent", fresh: true } : { era: "none" };
  }
  if (
    error instanceof TetherError &&
    error.code === "connection" &&
    (error.closure === "process_exit" || error.closure === "eof")
  ) {
    // Some legacy stdio servers exit on any request before initialize.
    return { era: "legacy", evidence: "exited", fresh: true };
  }
  return { era: "none" };
}
