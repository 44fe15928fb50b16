/**
 * The payload-free vocabulary that errors, lifecycle events and recovery decisions are written in.
 * Every layer may name these; they name nothing else.
 */

/** Stable error codes. Callers and the CLI match on these, never on message text. */
export type ErrorCode =
  | "config"
  | "connection"
  | "protocol"
  | "timeout"
  | "limit"
  | "unauthorized"
  | "forbidden"
  | "throttled"
  | "upstream"
  | "remote_error"
  | "internal"
  | "cancelled";

/** Where time was being spent when something failed. */
export type Stage =
  | "config"
  | "spawn"
  | "http_request"
  | "sse_endpoint"
  | "probe"
  | "initialize"
  | "initialized"
  | "list_tools"
  | "call"
  | "close";

/** Which budget applied: establishment and tool listing, or operations on an established client. */
export type Phase = "discovery" | "call";

/** How a session came to close; payload-free, for errors and diagnostics. */
export type ClosureCategory =
  | "closed_by_client"
  | "eof"
  | "process_exit"
  | "reset"
  | "session_expired"
  | "limit"
  | "protocol"
  | "deadline"
  | "cancelled";

/** Who cancelled, when something was cancelled. */
export type CancellationSource = "caller" | "deadline" | "signal";

/**
 * Whether a call may have had its effect on the server: `none` (it never left, or the server
 * refused it), `unknown` (it left and no readable answer came back), `done` (the server answered
 * with a result: it ran, even if the result itself was refused).
 */
export type CallEffect = "none" | "unknown" | "done";

/**
 * Why a redirect was refused (code `connection`): `redirect_refused` (another origin, a non-HTTP(S)
 * target, a missing or invalid Location, or a redirect that would turn a request with a body into
 * a GET), `too_many_redirects` (more same-origin hops than the fetch policy follows).
 */
export type RedirectReason = "redirect_refused" | "too_many_redirects";

/** How a client reaches its server: a child process, Streamable HTTP, or the 2024-11-05 HTTP+SSE transport. */
export type TransportMode = "stdio" | "streamable-http" | "sse";

/** Which handshake a server speaks: `legacy` (`initialize`, up to 2025-11-25) or `modern` (2026-07-28 on). */
export type Era = "legacy" | "modern";
