import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { closedError, failureFrom, limitError, protocolError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { SendContext, Transport } from "../jsonrpc/channel.ts";
import { decodeText } from "../jsonrpc/decode.ts";
import type { JsonRpcMessage } from "../jsonrpc/messages.ts";
import { ByteBudget, boundedChunks } from "./byte-budget.ts";
import {
  asTransportError,
  discard,
  eventStreamOf,
  fetchOrFail,
  type HttpOptions,
  HttpTransportBase,
  rejectionOf,
} from "./http-common.ts";
import { InvalidUtf8, SseReader } from "./sse-framer.ts";

export interface LegacySseOptions extends HttpOptions {
  /** Ceiling for one event on the shared stream (replies and unsolicited messages alike). */
  maxEventBytes: number | (() => number);
}

/**
 * The 2024-11-05 HTTP+SSE transport: one long GET stream carries every server message; its first
 * event names the endpoint that takes our POSTs. The stream is shared, so an event over the
 * ceiling closes the session: it cannot be resynchronised.
 */
export class LegacySseTransport extends HttpTransportBase<LegacySseOptions> implements Transport {
  readonly mode = "sse" as const;
  #endpoint: URL | undefined;

  /** Opens the stream and resolves when the `endpoint` event arrives; fails at once on anything else. */
  async start(signal: AbortSignal): Promise<void> {
    const where = { stage: "sse_endpoint" as const, phase: "discovery" as const, redactor: this.o.redactor };
    const onAbort = () => this.life.abort(signal.reason);
    if (signal.aborted) throw signal.reason;
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await fetchOrFail(
        this.o.fetch,
        this.o.url,
        { method: "GET", headers: { ...this.o.headers, accept: "text/event-stream" } },
        this.life.signal,
        where,
      );
      if (!response.ok) throw await rejectionOf(response, this.life.signal);
      const body = eventStreamOf(response);
      if (!body)
        throw protocolError(where, "not_event_stream", "the server's stream was not an event stream");
      const chunks = boundedChunks(body, new ByteBudget(Number.MAX_SAFE_INTEGER), this.life.signal);
      const reader = new SseReader(this.o.maxEventBytes);
      await new Promise<void>((resolve, reject) => {
        let waiting = true;
        const onEvent = (event: { event: string; data: string; bytes: number }) => {
          if (waiting) {
            if (event.event !== "endpoint") {
              throw protocolError(
                where,
                "no_endpoint",
                "the stream's first event was not the endpoint event",
              );
            }
            this.#endpoint = this.#resolveEndpoint(event.data, where);
            waiting = false;
            resolve();
            return;
          }
          if (event.event !== "message") return;
          const decoded = decodeText(event.data);
          if (!decoded.ok) return;
          for (const m of decoded.messages) this.emitMessage(m, event.bytes);
        };
        void (async () => {
          try {
            for await (const chunk of chunks) reader.push(chunk, onEvent);
            reader.end(onEvent);
            const ended = closedError(
              { ...where, stage: waiting ? "sse_endpoint" : "call", phase: waiting ? "discovery" : "call" },
              "eof",
              waiting ? "the stream ended before the endpoint event" : "the server closed the event stream",
            );
            if (waiting) reject(ended);
            this.fail(ended);
          } catch (error) {
            const failure = this.#streamFailure(error, waiting, where);
            if (waiting) reject(failure);
            this.fail(
              failureFrom(failure, where, (e) => closedError(where, "reset", "the event stream failed", e)),
            );
          }
        })();
      });
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  #streamFailure(
    error: unknown,
    waiting: boolean,
    where: { stage: "sse_endpoint"; phase: "discovery"; redactor: HttpOptions["redactor"] },
  ): unknown {
    const w = waiting ? where : { ...where, stage: "call" as const, phase: "call" as const };
    if (error instanceof ByteCeilingExceeded) {
      return limitError(
        w,
        "frame_too_large",
        `an event passed the ${error.maxBytes}-byte ceiling`,
        error.observedBytes,
        {
          maxFrameBytes: error.maxBytes,
        },
      );
    }
    if (error instanceof InvalidUtf8)
      return protocolError(w, "invalid_utf8", "the event stream was not valid UTF-8");
    if (this.life.signal.aborted) return this.life.signal.reason ?? error;
    return asTransportError(error, w);
  }

  #resolveEndpoint(
    data: string,
    where: { stage: "sse_endpoint"; phase: "discovery"; redactor: HttpOptions["redactor"] },
  ): URL {
    const text = data.trim();
    if (text === "") throw protocolError(where, "bad_endpoint", "the endpoint event was empty");
    let url: URL;
    try {
      url = new URL(text, this.o.url);
    } catch {
      throw protocolError(where, "bad_endpoint", "the endpoint event was not a valid URI");
    }
    if (url.origin !== this.o.url.origin) {
      throw protocolError(where, "cross_origin_endpoint", "the endpoint event named another origin; refused");
    }
    return url;
  }

  async send(message: JsonRpcMessage, ctx: SendContext): Promise<void> {
    if (this.closure) throw this.closure;
    const endpoint = this.#endpoint;
    if (!endpoint)
      throw closedError({ stage: "sse_endpoint", phase: "discovery" }, "eof", "the stream is not open");
    // One controller for this POST, aborted by the message's cancellation or the transport's end.
    const request = this.inflight.open(ctx);
    try {
      if (request.signal.aborted) throw request.signal.reason;
      const response = await fetchOrFail(
        this.o.fetch,
        endpoint,
        {
          method: "POST",
          headers: { ...this.o.headers, "content-type": "application/json" },
          body: JSON.stringify(message),
        },
        request.signal,
        { stage: "http_request", phase: "call", redactor: this.o.redactor },
      );
      if (!response.ok) throw await rejectionOf(response, request.signal);
      // Awaited, so that the next POST finds this connection free rather than opening another.
      await discard(response);
    } finally {
      request.done();
    }
  }

  /** The shared stream is the channel: when it fails, everything riding on it stops too. */
  protected override fail(error: TetherError): boolean {
    const first = super.fail(error);
    this.life.abort();
    return first;
  }
}
