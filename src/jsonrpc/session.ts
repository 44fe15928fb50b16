import type { Phase, Stage } from "../errors/codes.ts";
import { closedError, failureFrom, limitError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { asTetherError, type TetherError } from "../errors/tether-error.ts";
import { forCall } from "../errors/to-public.ts";
import { Listeners, type Transport, type Unsubscribe } from "../transport/transport.ts";
import {
  isNotification,
  isRequest,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  RpcReplyError,
} from "./messages.ts";

export type SessionState = "connecting" | "open" | "closing" | "closed";

/**
 * A transport reports its channel's failures as seen from an established session (stage and
 * phase `call`); during establishment the same failure belongs to the stage in progress.
 */
function attribute(
  error: TetherError,
  where: { stage: Stage; phase: Phase; redactor: Redactor },
): TetherError {
  if (error.stage !== "call" || error.phase !== "call" || where.phase === "call") return error;
  return forCall(error, where);
}

/** Server requests answered at once; more are refused until some finish, so a server cannot pile them up. */
export const MAX_SERVER_REQUESTS = 16;

export interface RequestOptions {
  /** Bounds the wait; its abort reason is what the request rejects with. */
  signal: AbortSignal;
  /** Ceiling for the reply's bytes. */
  maxBytes: number;
  /** Per-request headers for HTTP transports (the protocol layer computes them). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Whether abandoning the request sends `notifications/cancelled`. Never for `initialize`; not on
   * modern HTTP, where closing the reply stream is the cancellation.
   */
  cancelOnAbort: boolean;
}

export interface Reply {
  result: JsonObject;
  /** Raw size of the frame that carried it. */
  bytes: number;
}

interface Pending {
  resolve(reply: Reply): void;
  reject(error: unknown): void;
  maxBytes: number;
}

export interface SessionOptions {
  redactor: Redactor;
  /**
   * Ceiling for one unsolicited frame (a notification or a server request). On a shared stream a
   * larger one closes the session: P6.
   */
  maxFrameBytes: number;
  /**
   * Answers a server request other than `ping`; undefined means we do not serve that method
   * (it is refused with -32601).
   */
  serve?: (method: string, params: JsonObject, signal: AbortSignal) => Promise<JsonObject> | undefined;
  /** Ceiling for the bytes of one answer we send back. */
  maxAnswerBytes?: number;
  /** Told once, when the session starts closing, with the closure error. */
  onClosed?: (closure: TetherError) => void;
}

/**
 * One JSON-RPC conversation over one transport: ids, the pending map, and an explicit state.
 * Closing swaps out the pending map and settles every waiter with the same closure error; the
 * first cause wins. The session owns its transport and closes it exactly once.
 */
export class Session {
  readonly transport: Transport;
  #state: SessionState = "connecting";
  #nextId = 1;
  #pending = new Map<JsonRpcId, Pending>();
  #closure: TetherError | undefined;
  /** Server requests being answered right now (bounded by MAX_SERVER_REQUESTS). */
  #serving = 0;
  #closing: Promise<void> | undefined;
  readonly #life = new AbortController();
  readonly #unsubscribe: Unsubscribe[];
  readonly #options: SessionOptions;
  /** Server notifications (progress, logging, list changes); a listener that throws is ignored. */
  readonly notifications = new Listeners<[JsonRpcNotification]>();
  /** Where the session is, for closure errors: set by whoever drives it. */
  stage: Stage = "initialize";
  phase: Phase = "discovery";

  constructor(transport: Transport, options: SessionOptions) {
    this.transport = transport;
    this.#options = options;
    this.#unsubscribe = [
      transport.onMessage((m, bytes) => this.#receive(m, bytes)),
      transport.onClose((error) => void this.close(error)),
    ];
  }

  /**
   * The ceiling for the next frame on a shared stream: the largest reply any pending request
   * may take, or the unsolicited-frame ceiling if that is larger. A frame past it cannot belong
   * to anything that may take it, and the stream cannot be resynchronised (P6).
   */
  frameCeiling(): number {
    let max = this.#options.maxFrameBytes;
    for (const entry of this.#pending.values()) if (entry.maxBytes > max) max = entry.maxBytes;
    return max;
  }

  get state(): SessionState {
    return this.#state;
  }

  /** The error that closed the session, once it is closing or closed. */
  get closure(): TetherError | undefined {
    return this.#closure;
  }

  markOpen(): void {
    if (this.#state === "connecting") this.#state = "open";
  }

  request(method: string, params: JsonObject | undefined, options: RequestOptions): Promise<Reply> {
    if (this.#closure) return Promise.reject(this.#closure);
    if (options.signal.aborted) return Promise.reject(options.signal.reason);
    const id = this.#nextId++;
    const message: JsonRpcRequest = { jsonrpc: "2.0", id, method };
    if (params !== undefined) message.params = params;
    return new Promise<Reply>((resolve, reject) => {
      const { signal } = options;
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        reject(signal.reason);
        if (options.cancelOnAbort) this.#sendCancel(id);
      };
      const done = () => signal.removeEventListener("abort", onAbort);
      this.#pending.set(id, {
        resolve: (reply) => {
          done();
          resolve(reply);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        maxBytes: options.maxBytes,
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.transport
        .send(message, { signal, maxBytes: options.maxBytes, headers: options.headers, requestId: id })
        .catch((error: unknown) => {
          const entry = this.#pending.get(id);
          if (!entry) return;
          this.#pending.delete(id);
          entry.reject(error);
        });
    });
  }

  /** Sends a notification; resolves once it is handed to the transport (and, on HTTP, accepted). */
  async notify(
    method: string,
    params: JsonObject | undefined,
    signal: AbortSignal,
    headers?: Readonly<Record<string, string>>,
  ): Promise<void> {
    if (this.#closure) throw this.#closure;
    const message: JsonRpcNotification = { jsonrpc: "2.0", method };
    if (params !== undefined) message.params = params;
    await this.transport.send(message, { signal, maxBytes: 64 * 1024, headers });
  }

  #sendCancel(id: JsonRpcId): void {
    if (this.#closure) return;
    this.notify(
      "notifications/cancelled",
      { requestId: id, reason: "cancelled by the client" },
      this.#life.signal,
    ).catch(() => {});
  }

  #receive(received: JsonRpcMessage, bytes: number): void {
    let message = received;
    if (this.#closure) return;
    if ((isRequest(message) || isNotification(message)) && bytes > this.#options.maxFrameBytes) {
      void this.close(
        limitError(
          { stage: this.stage, phase: this.phase, redactor: this.#options.redactor },
          "frame_too_large",
          `an unsolicited message passed the ${this.#options.maxFrameBytes}-byte frame ceiling`,
          bytes,
          { maxFrameBytes: this.#options.maxFrameBytes },
        ),
      );
      return;
    }
    if (isRequest(message)) {
      this.#answerServerRequest(message);
      return;
    }
    if (isNotification(message)) {
      this.notifications.emit(message);
      return;
    }
    if (message.id === null) {
      // An error the server could not tie to an id: on a shared stream it can only be settled
      // against a request when exactly one is waiting, which is the case during a probe.
      if (!("error" in message) || this.#pending.size !== 1) return;
      const [only] = this.#pending.keys();
      message = { ...message, id: only! };
    }
    const id: JsonRpcId = message.id as JsonRpcId;
    const entry = this.#pending.get(id);
    // A response to nothing we are waiting for (never sent, or already abandoned) is dropped.
    if (!entry) return;
    this.#pending.delete(id);
    if (bytes > entry.maxBytes) {
      entry.reject(
        limitError(
          { stage: this.stage, phase: this.phase, redactor: this.#options.redactor },
          "response_too_large",
          `the reply passed the ${entry.maxBytes}-byte ceiling`,
          bytes,
          { maxBytes: entry.maxBytes },
        ),
      );
      return;
    }
    if ("error" in message) entry.reject(new RpcReplyError(message.error));
    else entry.resolve({ result: message.result, bytes });
  }

  /** We declare no client capabilities: `ping` is answered, anything else is refused with -32601. */
  #answerServerRequest(request: JsonRpcRequest): void {
    const send = (reply: JsonRpcMessage) => {
      if (this.#closure) return;
      this.transport.send(reply, { signal: this.#life.signal, maxBytes: 64 * 1024 }).catch(() => {});
    };
    if (request.method === "ping") {
      send({ jsonrpc: "2.0", id: request.id, result: {} });
      return;
    }
    const answer =
      this.#serving < MAX_SERVER_REQUESTS
        ? this.#options.serve?.(request.method, request.params ?? {}, this.#life.signal)
        : undefined;
    if (!answer) {
      const busy = this.#serving >= MAX_SERVER_REQUESTS && this.#options.serve !== undefined;
      send({
        jsonrpc: "2.0",
        id: request.id,
        error: busy
          ? { code: -32603, message: "Too many requests in flight" }
          : { code: -32601, message: "Method not found" },
      });
      return;
    }
    this.#serving++;
    answer
      .then(
        (result) => send({ jsonrpc: "2.0", id: request.id, result }),
        () =>
          send({
            jsonrpc: "2.0",
            id: request.id,
            error: { code: -32603, message: "The client could not answer" },
          }),
      )
      .finally(() => {
        this.#serving--;
      });
  }

  /**
   * Closes the session: settles every pending waiter with one closure error (the first cause
   * wins), then closes the transport. Idempotent; every call gets the same promise.
   */
  close(cause?: unknown): Promise<void> {
    if (this.#closing) return this.#closing;
    const where = { stage: this.stage, phase: this.phase, redactor: this.#options.redactor };
    this.#closure =
      cause === undefined
        ? closedError(where, "closed_by_client", "the client closed the connection")
        : attribute(
            failureFrom(cause, where, (e) => asTetherError(e, where)),
            where,
          );
    this.#state = "closing";
    try {
      this.#options.onClosed?.(this.#closure);
    } catch {
      // An observer's failure is its own.
    }
    const pending = this.#pending;
    this.#pending = new Map();
    for (const entry of pending.values()) entry.reject(this.#closure);
    for (const u of this.#unsubscribe) u();
    this.notifications.clear();
    this.#life.abort();
    this.#closing = this.transport.close(cause === undefined ? undefined : "failure").then(
      () => {
        this.#state = "closed";
      },
      () => {
        this.#state = "closed";
      },
    );
    return this.#closing;
  }
}
