import type { TransportMode } from "../errors/codes.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { type Abortable, signalOf } from "../lifecycle/cancellation.ts";
import type { Unsubscribe } from "../lifecycle/listeners.ts";
import type { JsonRpcId, JsonRpcMessage } from "./messages.ts";

/** What one exchange may spend and where its reply must come from. */
export interface SendContext {
  /**
   * Aborting it abandons the exchange; on HTTP that closes the request's own stream. For a
   * request it may be made on first read (an operation's budget is a Cancellation): a transport
   * that only checks or briefly waits on the abandonment reads `cancel` instead.
   */
  readonly signal: AbortSignal;
  /** The same abandonment as `signal`, readable without making an AbortSignal (absent: use `signal`). */
  readonly cancel?: Abortable;
  /** Ceiling for the bytes of this exchange's reply, where the reply has its own stream (HTTP). */
  maxBytes: number;
  /** Per-request headers computed by the protocol layer (HTTP only; stdio ignores them). */
  headers?: Readonly<Record<string, string>>;
  /** The request whose response this exchange carries (HTTP uses it to notice a missing reply). */
  requestId?: JsonRpcId;
}

/**
 * The context of one request's send. A class, so that `signal` is a getter on its prototype:
 * stdio never reads it, and then no AbortSignal is made for the call at all.
 */
export class RequestSendContext implements SendContext {
  readonly cancel: Abortable;
  readonly maxBytes: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly requestId: JsonRpcId;

  constructor(
    cancel: Abortable,
    maxBytes: number,
    headers: Readonly<Record<string, string>> | undefined,
    requestId: JsonRpcId,
  ) {
    this.cancel = cancel;
    this.maxBytes = maxBytes;
    this.headers = headers;
    this.requestId = requestId;
  }

  get signal(): AbortSignal {
    return signalOf(this.cancel);
  }
}

/**
 * What a transport is told once a version is negotiated, in its own terms: the bytes to add and
 * whether the server keeps a session. The era and the version table stay with the protocol layer.
 */
export interface ChannelTerms {
  /** Headers every later request carries (HTTP only): up to 2025-11-25, MCP-Protocol-Version from 2025-06-18 on. */
  readonly headers: Readonly<Record<string, string>>;
  /** The server keeps no session (2026-07-28): no Mcp-Session-Id, no standalone GET stream, no closing DELETE. */
  readonly stateless: boolean;
}

/**
 * The small interface every transport implements. A transport owns its resources (child process,
 * streams, sockets) and disposes them exactly once, in `close()`. It reports a fatal failure of
 * its channel once, through `onClose`; failures of one exchange reject that exchange's `send`.
 */
export interface Transport {
  readonly mode: TransportMode;
  /**
   * The session the server named (Streamable HTTP's `Mcp-Session-Id`), while there is one; only
   * tracing reads it (`mcp.session.id`).
   */
  readonly sessionId?: string | undefined;
  /** Opens the channel (spawns, or waits for the SSE endpoint); bounded by `signal`. */
  start(signal: AbortSignal): Promise<void>;
  /**
   * Sends one message. On HTTP it settles when the reply stream is done: it rejects if the stream
   * ended without the response to `ctx.requestId`, or with an HttpRejection for a refused POST.
   */
  send(message: JsonRpcMessage, ctx: SendContext): Promise<void>;
  /** Every message received, with its raw size in bytes. */
  onMessage(listener: (message: JsonRpcMessage, bytes: number) => void): Unsubscribe;
  /** The channel failed or ended; called at most once. */
  onClose(listener: (error: TetherError) => void): Unsubscribe;
  /** Told the negotiated terms once they are known (HTTP adds their headers to later requests). */
  negotiated?(terms: ChannelTerms): void;
  /** Told once establishment is complete and the client is handed over (HTTP opens its optional GET stream). */
  opened?(): void;
  /**
   * Releases everything; idempotent, every call gets the same promise, never rejects. `failure`
   * (establishment failed or the channel broke) skips the polite waits a normal close gives.
   */
  close(reason?: "failure"): Promise<void>;
  /** Failures met while disposing (a kill that threw, a DELETE that failed): reported, never thrown. */
  readonly cleanupErrors: unknown[];
}
