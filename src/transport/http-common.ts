import { setMaxListeners } from "node:events";
import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { closedError, networkError } from "../errors/failures.ts";
import { type BodyKind, HttpRejection } from "../errors/http-rejection.ts";
import { Interrupt, interruptOf } from "../errors/interrupt.ts";
import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { SendContext } from "../jsonrpc/channel.ts";
import { decodeText } from "../jsonrpc/decode.ts";
import type { JsonRpcErrorObject } from "../jsonrpc/messages.ts";
import { stopWatching, watchAbort } from "../lifecycle/cancellation.ts";
import type { FetchFn } from "../options/deps.ts";
import { ByteBudget, readBounded } from "./byte-budget.ts";
import { fetchWithPolicy } from "./fetch-policy.ts";
import { TransportBase } from "./transport.ts";

/** How much of a refused request's body is read to learn what it was; the rest is never read. */
export const ERROR_BODY_PEEK_BYTES = 16 * 1024;

export interface HttpOptions {
  url: URL;
  /** Headers configured by the user (credentials among them); sent on every request. */
  headers: Readonly<Record<string, string>>;
  fetch: FetchFn;
  /** Called once when the transport has closed: lets go of a connection pool the transport owns. */
  release?: (() => void) | undefined;
  redactor: Redactor;
}

export function mediaType(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Retry-After as ms: delta-seconds or an HTTP date. */
export function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("retry-after");
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * Reads at most a small prefix of a refused request's body, to tell a JSON-RPC error from
 * anything else, then releases the body. A 20 MB error page costs 16 KiB.
 */
export async function rejectionOf(response: Response, signal: AbortSignal): Promise<HttpRejection> {
  const retry = retryAfterMs(response);
  if (!response.body) return new HttpRejection(response.status, "empty", undefined, retry, 0);
  const budget = new ByteBudget(ERROR_BODY_PEEK_BYTES);
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(response.body, budget, signal);
  } catch (error) {
    if (error instanceof ByteCeilingExceeded) {
      return new HttpRejection(response.status, "unreadable", undefined, retry, error.observedBytes);
    }
    if (interruptOf(signal)) throw signal.reason;
    return new HttpRejection(response.status, "unreadable", undefined, retry, budget.seenBytes);
  }
  if (bytes.byteLength === 0) return new HttpRejection(response.status, "empty", undefined, retry, 0);
  const text = new TextDecoder().decode(bytes);
  let kind: BodyKind = "text";
  let rpc: JsonRpcErrorObject | undefined;
  const decoded = decodeText(text);
  if (decoded.ok) {
    const failure = decoded.messages.find((m) => "error" in m);
    if (failure && "error" in failure) {
      kind = "jsonrpc";
      rpc = failure.error;
    } else kind = "json";
  } else {
    try {
      JSON.parse(text);
      kind = "json";
    } catch {
      kind = "text";
    }
  }
  return new HttpRejection(response.status, kind, rpc, retry, bytes.byteLength);
}

/** Where an exchange's failure is reported: its stage and phase, and the redactor for what it quotes. */
export type FetchWhere = {
  stage: "http_request" | "sse_endpoint";
  phase: "discovery" | "call";
  redactor: Redactor;
};

/**
 * Runs fetch under the redirect policy (fetch-policy.ts) and maps its failure: an abort passes
 * through as the signal's reason (an Interrupt); a refused redirect is already a TetherError;
 * anything else is a network failure, classified by errno, never by message.
 */
export async function fetchOrFail(
  fetchFn: FetchFn,
  url: URL,
  init: RequestInit,
  signal: AbortSignal,
  where: FetchWhere,
): Promise<Response> {
  try {
    return await fetchWithPolicy(fetchFn, url, init, signal, where);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    // A fetch wrapper of ours (authorization) reports its own failures and its own time limits.
    if (error instanceof TetherError || error instanceof Interrupt) throw error;
    throw networkError(where, error);
  }
}

/**
 * What a failed exchange threw, with anything unknown (a body read that broke off, a socket
 * reset mid-stream) turned into a connection failure. Internal markers pass through for the
 * layers above to interpret.
 */
export function asTransportError(
  error: unknown,
  where: { stage: "http_request" | "sse_endpoint" | "call"; phase: "discovery" | "call"; redactor: Redactor },
): unknown {
  if (error instanceof TetherError || error instanceof HttpRejection || error instanceof Interrupt)
    return error;
  if (error instanceof ByteCeilingExceeded) return error;
  const e = networkError(where, error);
  return e.reason === "network"
    ? closedError(where, "reset", "the connection broke off mid-reply", error)
    : e;
}

/**
 * Releases a response body we will not read. The promise (which never rejects) settles when the
 * body is released: awaiting it before the next request lets that request reuse the connection.
 */
export function discard(response: Response): Promise<void> {
  return response.body ? response.body.cancel().catch(() => {}) : Promise.resolve();
}

/** A response's event stream; undefined, with the response released, when it is not one. */
export function eventStreamOf(response: Response): ReadableStream<Uint8Array> | undefined {
  if (mediaType(response) === "text/event-stream" && response.body) return response.body;
  discard(response);
  return undefined;
}

/**
 * The requests one HTTP transport has in flight, each with a controller of its own. A request's
 * controller is aborted by its message's cancellation, reached through the cancellation's own
 * callbacks (so no AbortSignal is made for a call), or, all at once, by the transport's end: one
 * listener on the lifetime's signal for the whole transport, none per request.
 */
export class InflightRequests {
  readonly #live = new Set<AbortController>();
  readonly #life: AbortSignal;

  constructor(life: AbortSignal) {
    this.#life = life;
    life.addEventListener(
      "abort",
      () => {
        for (const request of this.#live) request.abort(life.reason);
      },
      { once: true },
    );
  }

  /** The signal for one request (already aborted if its message or the transport is); `done()` in a finally. */
  open(ctx: SendContext): { signal: AbortSignal; done: () => void } {
    const request = new AbortController();
    const source = ctx.cancel ?? ctx.signal;
    const onAbort = () => request.abort(source.reason);
    if (source.aborted) onAbort();
    else if (this.#life.aborted) request.abort(this.#life.reason);
    else {
      watchAbort(source, onAbort);
      this.#live.add(request);
    }
    return {
      signal: request.signal,
      done: () => {
        stopWatching(source, onAbort);
        this.#live.delete(request);
      },
    };
  }
}

/**
 * What both HTTP transports share beyond TransportBase: their options, a lifetime whose end stops
 * every request and stream of the transport, the requests in flight, and a close that happens
 * once: the channel fails as closed by the client, the lifetime ends, the subclass ends its
 * session if it keeps one (`endSession`), and the connection pool the transport owns is released.
 */
export abstract class HttpTransportBase<O extends HttpOptions> extends TransportBase {
  protected readonly o: O;
  protected readonly life = new AbortController();
  protected readonly inflight = new InflightRequests(this.life.signal);
  #closing: Promise<void> | undefined;

  constructor(options: O) {
    super();
    this.o = options;
    // The streams, the session's end and the requests in flight (through `inflight`) listen to
    // the lifetime, a listener each.
    setMaxListeners(0, this.life.signal);
  }

  close(_reason?: "failure"): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.fail(
      closedError({ stage: "close", phase: "call" }, "closed_by_client", "the client closed the connection"),
    );
    this.life.abort();
    try {
      await this.endSession();
    } finally {
      this.o.release?.();
    }
  }

  /** Ends the session the transport opened, once its lifetime is over: bounded, best effort. */
  protected async endSession(): Promise<void> {}
}
