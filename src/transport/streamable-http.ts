import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import type { Phase } from "../errors/codes.ts";
import { closedError, limitError, protocolError } from "../errors/failures.ts";
import type { ChannelTerms, SendContext, Transport } from "../jsonrpc/channel.ts";
import { type DecodeResult, decodeText } from "../jsonrpc/decode.ts";
import { isRequest, isResponse, type JsonRpcId, type JsonRpcMessage } from "../jsonrpc/messages.ts";
import { sleep } from "../lifecycle/abort.ts";
import type { Clock } from "../lifecycle/clock.ts";
import { BodyNotUtf8, ByteBudget, boundedChunks } from "./byte-budget.ts";
import { fetchWithPolicy } from "./fetch-policy.ts";
import {
  asTransportError,
  discard,
  eventStreamOf,
  type FetchWhere,
  fetchOrFail,
  type HttpOptions,
  HttpTransportBase,
  mediaType,
  rejectionOf,
} from "./http-common.ts";
import { readBoundedMessages } from "./json-reply.ts";
import { InvalidUtf8, type SseEvent, SseReader } from "./sse-framer.ts";

/**
 * A POST's reply belongs to that one request: an error there with `id: null` (a server that could
 * not read the id, as JSON-RPC prescribes) is that request's answer.
 */
function ownReply(m: JsonRpcMessage, id: JsonRpcId): JsonRpcMessage {
  return isResponse(m) && m.id === null && "error" in m ? { ...m, id } : m;
}

/** How long closing waits for the DELETE that ends a legacy session. */
export const SESSION_DELETE_TIMEOUT_MS = 1000;
/** How often a reply stream that ended early (2025-11-25 polling) may be resumed with Last-Event-ID. */
export const MAX_STREAM_RESUMPTIONS = 5;
/** The wait before resuming when the server sent no `retry:` hint. */
export const DEFAULT_RESUME_DELAY_MS = 500;

export interface StreamableHttpOptions extends HttpOptions {
  /** Ceiling for one unsolicited event on the standalone GET stream. */
  maxFrameBytes: number;
  /** Open the optional server-to-client GET stream once a server that keeps a session is negotiated. */
  listen: boolean;
  clock: Clock;
}

/**
 * Streamable HTTP: every message is its own POST; a request's reply is a JSON body or an SSE
 * stream scoped to it. Sessions (Mcp-Session-Id) and the optional GET stream are kept here, until
 * the negotiated terms say the exchange is stateless (2026-07-28): then it carries neither.
 */
export class StreamableHttpTransport extends HttpTransportBase<StreamableHttpOptions> implements Transport {
  readonly mode = "streamable-http" as const;
  #sessionId: string | undefined;
  /** The negotiated terms' headers, sent on every later request. */
  #termsHeaders: Readonly<Record<string, string>> = {};
  #stateless = false;
  #established = false;

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
  }

  negotiated(terms: ChannelTerms): void {
    this.#established = true;
    this.#stateless = terms.stateless;
    this.#termsHeaders = terms.headers;
    if (terms.stateless) this.#sessionId = undefined;
  }

  opened(): void {
    if (!this.#established || this.#stateless || !this.o.listen || this.closure) return;
    // Started before connect() hands over the client, so the stream's GET goes out ahead of the
    // caller's first request (on the connection the handshake left free; that request opens
    // another). The order is then always the same: a server sees the standalone stream before
    // any reply stream, and never takes it for the resumption of one (a GET that followed a
    // POST's stream, as the conformance suite's sse-retry scenario reads it, would be).
    void this.#listen();
  }

  async send(message: JsonRpcMessage, ctx: SendContext): Promise<void> {
    if (this.closure) throw this.closure;
    // One controller for this request, aborted by the call's cancellation or the transport's end.
    const request = this.inflight.open(ctx);
    const signal = request.signal;
    const phase: Phase = this.#established ? "call" : "discovery";
    const where = { stage: "http_request" as const, phase, redactor: this.o.redactor };
    try {
      const response = await this.#fetch(
        "POST",
        { ...ctx.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
        signal,
        where,
        JSON.stringify(message),
      );
      const sessionId = response.headers.get("mcp-session-id");
      if (sessionId && !this.#stateless && !this.#sessionId) this.#sessionId = sessionId;
      if (!response.ok) {
        const rejection = await rejectionOf(response, signal);
        if (response.status === 404 && this.#sessionId && this.#established) {
          const expired = closedError(
            where,
            "session_expired",
            "the server no longer knows this session (HTTP 404)",
            rejection,
            {
              httpStatus: 404,
            },
          );
          this.fail(expired);
          throw expired;
        }
        throw rejection;
      }
      if (!isRequest(message)) {
        // Awaited: the next request (tools/list right after notifications/initialized) then
        // finds this connection free rather than opening another.
        await discard(response);
        return;
      }
      await this.#readReply(response, message.id, ctx.maxBytes, signal, where);
    } catch (error) {
      if (error instanceof ByteCeilingExceeded) {
        throw limitError(
          where,
          "response_too_large",
          `the reply passed the ${error.maxBytes}-byte ceiling`,
          error.observedBytes,
          { maxBytes: error.maxBytes },
        );
      }
      if (signal.aborted) throw signal.reason;
      if (error instanceof InvalidUtf8)
        throw protocolError(where, "invalid_utf8", "the server's reply stream was not valid UTF-8");
      throw asTransportError(error, where);
    } finally {
      request.done();
    }
  }

  async #readReply(
    response: Response,
    id: JsonRpcId,
    maxBytes: number,
    signal: AbortSignal,
    where: { stage: "http_request"; phase: Phase; redactor: HttpOptions["redactor"] },
  ): Promise<void> {
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      discard(response);
      throw limitError(
        where,
        "response_too_large",
        `the reply declared more than the ${maxBytes}-byte ceiling`,
        0,
        {
          maxBytes,
        },
      );
    }
    const type = mediaType(response);
    const budget = new ByteBudget(maxBytes);
    if (type === "application/json") {
      let decoded: DecodeResult;
      try {
        decoded = response.body ? await readBoundedMessages(response.body, budget, signal) : decodeText("");
      } catch (error) {
        if (error instanceof BodyNotUtf8)
          throw protocolError(where, "invalid_utf8", "the server's reply was not valid UTF-8");
        throw error;
      }
      if (!decoded.ok)
        throw protocolError(where, decoded.reason, "the server's reply was not a JSON-RPC message");
      let answered = false;
      for (const raw of decoded.messages) {
        const m = ownReply(raw, id);
        if (isResponse(m) && m.id === id) answered = true;
        this.emitMessage(m, budget.seenBytes);
      }
      if (!answered)
        throw protocolError(where, "missing_response", "the server's reply did not answer the request");
      return;
    }
    if (type === "text/event-stream" && response.body) {
      await this.#readEventStream(response, id, budget, signal, where);
      return;
    }
    discard(response);
    throw protocolError(
      where,
      "unexpected_content_type",
      "the server's reply had an unexpected content type",
    );
  }

  /** Reads a request's SSE reply until its response arrives, resuming with Last-Event-ID if the server closes early. */
  async #readEventStream(
    first: Response,
    id: JsonRpcId,
    budget: ByteBudget,
    signal: AbortSignal,
    where: { stage: "http_request"; phase: Phase; redactor: HttpOptions["redactor"] },
  ): Promise<void> {
    let response = first;
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    for (let resumptions = 0; ; resumptions++) {
      const reader = new SseReader(budget.maxBytes);
      let answered = false;
      const onEvent = (event: SseEvent) => {
        if (event.id !== undefined) lastEventId = event.id;
        if (event.event !== "message" || event.data.trim() === "") return;
        const decoded = decodeText(event.data);
        if (!decoded.ok)
          throw protocolError(where, decoded.reason, "an event in the server's reply was not JSON-RPC");
        for (const raw of decoded.messages) {
          const m = ownReply(raw, id);
          if (isResponse(m) && m.id === id) answered = true;
          this.emitMessage(m, event.bytes);
        }
      };
      for await (const chunk of boundedChunks(response.body!, budget, signal)) {
        reader.push(chunk, onEvent);
        if (answered) return;
      }
      reader.end(onEvent);
      if (answered) return;
      retryMs = reader.retryMs ?? retryMs;
      if (lastEventId === undefined || resumptions >= MAX_STREAM_RESUMPTIONS) {
        throw closedError(where, "eof", "the server's reply stream ended without a response");
      }
      await sleep(this.o.clock, retryMs ?? DEFAULT_RESUME_DELAY_MS, signal);
      response = await this.#fetch(
        "GET",
        { accept: "text/event-stream", "last-event-id": lastEventId },
        signal,
        where,
      );
      if (!response.ok) throw await rejectionOf(response, signal);
      if (!eventStreamOf(response))
        throw protocolError(where, "unexpected_content_type", "the resumed stream was not an event stream");
    }
  }

  /** The optional server-to-client stream. A 404 or 405 (or any refusal) just means there is none. */
  async #listen(): Promise<void> {
    const signal = this.life.signal;
    const where = { stage: "http_request" as const, phase: "call" as const, redactor: this.o.redactor };
    try {
      const response = await this.#fetch("GET", { accept: "text/event-stream" }, signal, where);
      if (!response.ok) {
        discard(response);
        return;
      }
      const body = eventStreamOf(response);
      if (!body) return;
      const reader = new SseReader(this.o.maxFrameBytes);
      const budget = new ByteBudget(Number.MAX_SAFE_INTEGER);
      const onEvent = (event: SseEvent) => {
        if (event.event !== "message" || event.data.trim() === "") return;
        const decoded = decodeText(event.data);
        if (!decoded.ok) return;
        for (const m of decoded.messages) this.emitMessage(m, event.bytes);
      };
      for await (const chunk of boundedChunks(body, budget, signal)) reader.push(chunk, onEvent);
      reader.end(onEvent);
    } catch (error) {
      if (error instanceof ByteCeilingExceeded) {
        this.fail(
          limitError(
            where,
            "frame_too_large",
            `an unsolicited event passed the ${error.maxBytes}-byte ceiling`,
            error.observedBytes,
            {
              maxFrameBytes: error.maxBytes,
            },
          ),
        );
      }
      // Otherwise the optional stream is simply gone; requests carry on without it.
    }
  }

  /**
   * A request's headers: the configured ones, the session's id (none once the terms are
   * stateless), the negotiated terms' headers, then the request's own.
   */
  #headers(own: Readonly<Record<string, string>> = {}): Record<string, string> {
    const h: Record<string, string> = { ...this.o.headers };
    if (this.#sessionId) h["mcp-session-id"] = this.#sessionId;
    return Object.assign(h, this.#termsHeaders, own);
  }

  /** One POST or GET to the endpoint, with the request's headers; its failures labelled at `where`. */
  #fetch(
    method: "POST" | "GET",
    own: Readonly<Record<string, string>>,
    signal: AbortSignal,
    where: FetchWhere,
    body?: string,
  ): Promise<Response> {
    const headers = this.#headers(own);
    const init = body === undefined ? { method, headers } : { method, headers, body };
    return fetchOrFail(this.o.fetch, this.o.url, init, signal, where);
  }

  protected override async endSession(): Promise<void> {
    if (!this.#sessionId) return;
    // End the session we opened; a server that does not support DELETE answers 405, which is fine.
    const controller = new AbortController();
    const timer = this.o.clock.setTimeout(() => controller.abort(), SESSION_DELETE_TIMEOUT_MS);
    try {
      // Raced against the timer too: a caller's fetch that ignores its signal cannot hold close().
      const response = await fetchWithPolicy(
        this.o.fetch,
        this.o.url,
        { method: "DELETE", headers: this.#headers() },
        controller.signal,
        { stage: "close", phase: "call", redactor: this.o.redactor },
      );
      discard(response);
    } catch (error) {
      // Bounded and best effort: the session expires on the server's side anyway. A failure other
      // than our own timer is still reported.
      if (!controller.signal.aborted) this.cleanupErrors.push(error);
    } finally {
      this.o.clock.clearTimeout(timer);
    }
  }
}
