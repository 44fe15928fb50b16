import type { Phase, Stage } from "../errors/codes.ts";
import { closedError, failureFrom, limitError, tooDeepError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { INTERNAL_ERROR, METHOD_NOT_FOUND } from "../errors/rpc-codes.ts";
import { RpcReplyError } from "../errors/rpc-reply-error.ts";
import { asTetherError, type TetherError } from "../errors/tether-error.ts";
import { forCall } from "../errors/to-public.ts";
import { type Abortable, stopWatching, watchAbort } from "../lifecycle/cancellation.ts";
import { type Clock, realClock } from "../lifecycle/clock.ts";
import { Listeners, type Unsubscribe } from "../lifecycle/listeners.ts";
import { RequestSendContext, type Transport } from "./channel.ts";
import { INBOUND_LIMITS, type InboundDrops, InboundGate, type InboundLimits } from "./inbound-gate.ts";
import { MAX_JSON_DEPTH } from "./json-depth.ts";
import {
  isNotification,
  isRefused,
  isRequest,
  type JsonObject,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
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

/** Ceiling for what the server returns for one of our answers (on HTTP, the POST's body). */
const ANSWER_MAX_BYTES = 64 * 1024;

export interface RequestOptions {
  /**
   * Bounds the wait; its abort reason is what the request rejects with. An operation's budget is
   * a Cancellation, so a call listens on it without making an AbortSignal.
   */
  signal: Abortable;
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

/**
 * A request waiting for its reply. It is settled through `settle` / `fail`, which also stop
 * watching its signal, whoever settles it (the reply, a failed send, the session's close).
 */
interface Pending {
  resolve(reply: Reply): void;
  reject(error: unknown): void;
  maxBytes: number;
  signal: Abortable;
  onAbort: () => void;
}

function settle(entry: Pending, reply: Reply): void {
  stopWatching(entry.signal, entry.onAbort);
  entry.resolve(reply);
}

function fail(entry: Pending, error: unknown): void {
  stopWatching(entry.signal, entry.onAbort);
  entry.reject(error);
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
   * (it is refused with -32601). The signal aborts when the session closes.
   */
  serve?: (method: string, params: JsonObject, signal: AbortSignal) => Promise<JsonObject> | undefined;
  /** Told once, when the session starts closing, with the closure error. */
  onClosed?: (closure: TetherError) => void;
  /**
   * Told what the server sent past the bounds on server-initiated traffic (counts only): at the
   * first drop, then at most once a second, and when the session starts closing (before `onClosed`).
   */
  onInboundDropped?: (drops: InboundDrops) => void;
  /** Time for the inbound rate budget (default: real time). */
  clock?: Pick<Clock, "now">;
  /** The bounds on server-initiated traffic (default: INBOUND_LIMITS; tests narrow them). */
  inboundLimits?: InboundLimits;
}

/**
 * How long a `notifications/cancelled` may take to go out (on HTTP, its POST to be accepted). It is
 * a share of the cleanup grace: close() waits for it before closing the transport, whose own
 * disposal (a legacy session's DELETE, a stdio server's shutdown) still fits in what is left.
 */
export const CANCEL_NOTICE_GRACE_MS = 500;

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
  /** Admission for everything the server starts: server requests, our answers, notifications. */
  readonly #inbound: InboundGate;
  /**
   * Progress tokens of requests we sent, to the request's id: progress for a request still
   * pending is part of its reply (bounded by its own budgets), not server-initiated traffic.
   * Tokens of settled requests are swept lazily, so the map stays near the pending map's size.
   */
  readonly #progressOwners = new Map<string | number, JsonRpcId>();
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
    this.#inbound = new InboundGate(
      options.clock ?? realClock,
      (drops) => options.onInboundDropped?.(drops),
      options.inboundLimits ?? INBOUND_LIMITS,
    );
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

  /** The id the next request will carry (tracing names it, `jsonrpc.request.id`). */
  get nextRequestId(): number {
    return this.#nextId;
  }

  request(method: string, params: JsonObject | undefined, options: RequestOptions): Promise<Reply> {
    if (this.#closure) return Promise.reject(this.#closure);
    if (options.signal.aborted) return Promise.reject(options.signal.reason);
    const id = this.#nextId++;
    this.#expectProgress(params, id);
    const message: JsonRpcRequest =
      params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    const { signal, maxBytes, cancelOnAbort } = options;
    return new Promise<Reply>((resolve, reject) => {
      const onAbort = () => {
        // Settled already (the reply won the race): nothing was abandoned.
        if (!this.#pending.delete(id)) return;
        reject(signal.reason);
        if (cancelOnAbort) this.#sendCancel(id);
      };
      this.#pending.set(id, { resolve, reject, maxBytes, signal, onAbort });
      watchAbort(signal, onAbort);
      this.transport
        .send(message, new RequestSendContext(signal, maxBytes, options.headers, id))
        .catch((error: unknown) => {
          const entry = this.#pending.get(id);
          if (!entry) return;
          this.#pending.delete(id);
          fail(entry, error);
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

  /** Cancellation notices on their way out; close() lets them finish before the transport goes. */
  readonly #cancelNotices = new Set<Promise<void>>();

  /**
   * Tells the server we abandoned request `id`. The notice is bounded by its own grace rather than
   * by the session's life: the caller typically closes right after giving up, and the notice must
   * still reach the server (on HTTP it is a POST of its own).
   */
  #sendCancel(id: JsonRpcId): void {
    if (this.#closure) return;
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), CANCEL_NOTICE_GRACE_MS);
    const notice: Promise<void> = this.notify(
      "notifications/cancelled",
      { requestId: id, reason: "cancelled by the client" },
      bound.signal,
    )
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        this.#cancelNotices.delete(notice);
      });
    this.#cancelNotices.add(notice);
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
      if (this.#isSolicited(message) || this.#inbound.admitNotification()) this.notifications.emit(message);
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
      fail(
        entry,
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
    if (isRefused(message)) {
      const where = { stage: this.stage, phase: this.phase, redactor: this.#options.redactor };
      fail(entry, tooDeepError(where, MAX_JSON_DEPTH, message.answered));
      return;
    }
    if ("error" in message) fail(entry, new RpcReplyError(message.error));
    else settle(entry, { result: message.result, bytes });
  }

  /**
   * `ping` is answered; a method the application serves goes to its handler; anything else is
   * refused with -32601. Whatever the outcome, the request and its answer hold one place in the
   * inbound gate until our send settles; a request the gate turns away is dropped unanswered,
   * since under a flood an answer is the work to avoid.
   */
  #answerServerRequest(request: JsonRpcRequest): void {
    const slot = this.#inbound.admitRequest();
    if (!slot) return;
    const send = (reply: JsonRpcMessage) => {
      if (this.#closure || slot.signal.aborted) {
        slot.release();
        return;
      }
      this.transport
        .send(reply, { signal: slot.signal, maxBytes: ANSWER_MAX_BYTES })
        .then(slot.release, slot.release);
    };
    if (request.method === "ping") {
      send({ jsonrpc: "2.0", id: request.id, result: {} });
      return;
    }
    let answer: Promise<JsonObject> | undefined;
    try {
      answer = this.#options.serve?.(request.method, request.params ?? {}, slot.signal);
    } catch (error) {
      // A serve that throws instead of rejecting still answers, and gives its place back.
      answer = Promise.reject(error);
    }
    if (!answer) {
      send({
        jsonrpc: "2.0",
        id: request.id,
        error: { code: METHOD_NOT_FOUND, message: "Method not found" },
      });
      return;
    }
    answer.then(
      (result) => send({ jsonrpc: "2.0", id: request.id, result }),
      () =>
        send({
          jsonrpc: "2.0",
          id: request.id,
          error: { code: INTERNAL_ERROR, message: "The client could not answer" },
        }),
    );
  }

  /** Remembers a request's progress token, sweeping those of settled requests now and then. */
  #expectProgress(params: JsonObject | undefined, id: JsonRpcId): void {
    const meta = params?._meta;
    if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return;
    const token = meta.progressToken;
    if (typeof token !== "string" && typeof token !== "number") return;
    if (this.#progressOwners.size >= 2 * this.#pending.size + 16) {
      for (const [t, owner] of this.#progressOwners)
        if (!this.#pending.has(owner)) this.#progressOwners.delete(t);
    }
    this.#progressOwners.set(token, id);
  }

  /** Progress for a request still waiting: part of that request's reply, not the server's own traffic. */
  #isSolicited(notification: JsonRpcNotification): boolean {
    if (notification.method !== "notifications/progress") return false;
    const token = notification.params?.progressToken;
    if (typeof token !== "string" && typeof token !== "number") return false;
    const owner = this.#progressOwners.get(token);
    return owner !== undefined && this.#pending.has(owner);
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
    this.#inbound.close(this.#closure);
    try {
      this.#options.onClosed?.(this.#closure);
    } catch {
      // An observer's failure is its own.
    }
    const pending = this.#pending;
    this.#pending = new Map();
    for (const entry of pending.values()) fail(entry, this.#closure);
    for (const u of this.#unsubscribe) u();
    this.notifications.clear();
    this.#life.abort();
    // A cancellation notice still on its way is the server's only word that a call was abandoned
    // (S7): the transport stays up until it is through, within CANCEL_NOTICE_GRACE_MS.
    const notices = [...this.#cancelNotices];
    const closeTransport = () => this.transport.close(cause === undefined ? undefined : "failure");
    const closed = notices.length === 0 ? closeTransport() : Promise.all(notices).then(closeTransport);
    this.#closing = closed.then(
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
