/**
 * Tracing over OpenTelemetry, as the semantic conventions for MCP name it: loaded by connect()
 * only when `tracing` is on, and the only module that loads the optional peer
 * `@opentelemetry/api`. The establishment's spans are built from its lifecycle events (the same
 * points the diagnostics report), each request's around the request path's one send.
 *
 * What a span carries is payload-free: method, tool or prompt name, request id, protocol
 * version, session id, transport, the server's host and port, and the public error code. Never
 * arguments, results, URLs (their path and query), headers, or a server's error text.
 */
import type {
  Attributes,
  Context,
  Histogram,
  Meter,
  MeterProvider,
  Span,
  Tracer,
  TracerProvider,
} from "@opentelemetry/api";
import { classifyFailure } from "../errors/classify.ts";
import { configError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Reply, Session } from "../jsonrpc/session.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import type { TracingOptions } from "../options/options.ts";
import { CLIENT_INFO, type ResolvedTarget } from "../options/resolve.ts";
import type { ConnectionTracing } from "./api.ts";

type Api = typeof import("@opentelemetry/api");

/** A request's span name and the attributes its span and its measurement share. */
interface RequestKind {
  name: string;
  measured: Readonly<Attributes>;
}

/** How many method and name pairs are remembered (a tool catalog's worth); past it each is built afresh. */
const MAX_KINDS = 1_000;

/** The instrumentation scope spans and the metric are recorded under. */
export const INSTRUMENTATION = "mcp-tether";

/** `mcp.client.operation.duration`'s bucket boundaries, in seconds, as the conventions advise. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** Loads `@opentelemetry/api` and starts the establishment's span. A missing peer is a config error. */
export async function loadTracing(
  options: TracingOptions,
  target: ResolvedTarget,
): Promise<ConnectionTracing> {
  let api: Api;
  try {
    api = await import("@opentelemetry/api");
  } catch (cause) {
    throw configError(
      "tracing_unavailable",
      "tracing needs the optional peer dependency @opentelemetry/api: install it",
      cause,
    );
  }
  return new OtelTracing(api, options, target);
}

/** The attributes every span and measurement of a connection shares: where the server is, and how it is reached. */
function targetAttributes(target: ResolvedTarget): Attributes {
  if (target.kind === "stdio") return { "network.transport": "pipe" };
  const url = target.url;
  return {
    "network.transport": "tcp",
    "network.protocol.name": "http",
    // The host and port only: never the path, the query or the credentials a URL may hold.
    "server.address": url.hostname.replace(/^\[(.*)\]$/, "$1"),
    "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
  };
}

class OtelTracing implements ConnectionTracing {
  readonly #api: Api;
  readonly #tracer: Tracer;
  readonly #duration: Histogram;
  readonly #base: Attributes;
  readonly #root: Span;
  readonly #rootContext: Context;
  #attempt: Span | undefined;
  #attemptContext: Context | undefined;
  readonly #stages = new Map<string, Span>();
  readonly #kinds = new Map<string, RequestKind>();
  /** Until established (or failed), requests (the prefetched listing) are children of the attempt. */
  #establishing = true;

  constructor(api: Api, options: TracingOptions, target: ResolvedTarget) {
    this.#api = api;
    const tracers = (options.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider();
    const meters = (options.meterProvider as MeterProvider | undefined) ?? api.metrics.getMeterProvider();
    this.#tracer = tracers.getTracer(INSTRUMENTATION, CLIENT_INFO.version);
    const meter: Meter = meters.getMeter(INSTRUMENTATION, CLIENT_INFO.version);
    this.#duration = meter.createHistogram("mcp.client.operation.duration", {
      unit: "s",
      description:
        "The duration of the MCP request as observed on the sender, until its response is received.",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#base = targetAttributes(target);
    const parent = api.context.active();
    this.#root = this.#tracer.startSpan("connect", { attributes: this.#base }, parent);
    this.#rootContext = api.trace.setSpan(parent, this.#root);
  }

  event(e: LifecycleEvent): void {
    try {
      this.#event(e);
    } catch {
      // Tracing never breaks the connection.
    }
  }

  #event(e: LifecycleEvent): void {
    const api = this.#api;
    switch (e.type) {
      case "attempt_start":
        this.#attempt = this.#tracer.startSpan(
          "attempt",
          { attributes: { "tether.attempt": e.attempt } },
          this.#rootContext,
        );
        this.#attemptContext = api.trace.setSpan(this.#rootContext, this.#attempt);
        return;
      case "stage_start":
        this.#stages.get(e.stage)?.end();
        this.#stages.set(
          e.stage,
          this.#tracer.startSpan(
            e.stage,
            { attributes: { "tether.stage": e.stage, "tether.attempt": e.attempt } },
            this.#attemptContext ?? this.#rootContext,
          ),
        );
        return;
      case "stage_end": {
        const span = this.#stages.get(e.stage);
        this.#stages.delete(e.stage);
        if (!span) return;
        if (!e.ok && e.code) this.#failSpan(span, e.code, e.reason, e.rpcCode);
        span.end();
        return;
      }
      case "era_evidence":
        this.#attempt?.addEvent("era_evidence", { "tether.era": e.era, "tether.evidence": e.evidence });
        return;
      case "recovery":
        this.#root.addEvent("recovery", { "tether.decision": e.decision, "tether.why": e.why });
        return;
      case "attempt_end":
        if (!this.#attempt) return;
        if (!e.ok && e.code) this.#failSpan(this.#attempt, e.code, e.reason, undefined);
        this.#endAttempt();
        return;
      case "established":
        this.#root.setAttributes({
          "mcp.protocol.version": e.protocolVersion,
          "tether.era": e.era,
          "tether.attempts": e.attempt,
        });
        this.#endRoot();
        return;
      default:
        return;
    }
  }

  failed(error: TetherError): void {
    if (!this.#establishing) return;
    this.#failSpan(this.#root, error.code, error.reason, error.rpcCode);
    this.#root.setAttribute("tether.attempts", error.attempts ?? 1);
    this.#endRoot();
  }

  request(
    method: string,
    params: JsonObject | undefined,
    session: Session,
    protocolVersion: string,
    send: (params: JsonObject | undefined) => Promise<Reply>,
  ): Promise<Reply> {
    const api = this.#api;
    const named = typeof params?.name === "string" ? params.name : undefined;
    const kind = this.#kindOf(method, named, protocolVersion);
    const attributes: Attributes = { ...kind.measured, "jsonrpc.request.id": String(session.nextRequestId) };
    const sessionId = session.transport.sessionId;
    if (sessionId) attributes["mcp.session.id"] = sessionId;
    const parent = this.#establishing ? (this.#attemptContext ?? this.#rootContext) : api.context.active();
    const span = this.#tracer.startSpan(kind.name, { kind: api.SpanKind.CLIENT, attributes }, parent);
    const started = performance.now();
    // Plain continuations rather than an async frame: a traced call is on every request's path.
    const ended = (measured: Attributes): void => {
      span.end();
      this.#duration.record((performance.now() - started) / 1000, measured);
    };
    let sent: Promise<Reply>;
    try {
      sent = send(this.#carry(parent, span, params));
    } catch (error) {
      this.#failed(span, kind, error, ended);
      throw error;
    }
    return sent.then(
      (reply) => {
        if (method === "tools/call" && reply.result?.isError === true) {
          // The tool ran and said it failed: the conventions' `tool_error`.
          span.setAttribute("error.type", "tool_error");
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: "tool_error" });
          ended({ ...kind.measured, "error.type": "tool_error" });
        } else ended(kind.measured);
        return reply;
      },
      (error: unknown) => {
        this.#failed(span, kind, error, ended);
        throw error;
      },
    );
  }

  /** A request that failed: its span says how (the public code), and so does its measurement. */
  #failed(span: Span, kind: RequestKind, error: unknown, ended: (measured: Attributes) => void): void {
    const label = classifyFailure(error);
    this.#failSpan(span, label.code, label.reason, label.rpcCode);
    ended({
      ...kind.measured,
      "error.type": label.code,
      ...(label.rpcCode !== undefined && { "rpc.response.status_code": String(label.rpcCode) }),
    });
  }

  /**
   * A request's span name and the attributes it shares with its measurement: the conventions'
   * low-cardinality target (the tool's or the prompt's name, never an argument). Remembered per
   * method and name, up to a bound, so a call builds neither again.
   */
  #kindOf(method: string, named: string | undefined, protocolVersion: string): RequestKind {
    const key = named === undefined ? method : `${method}\u0000${named}`;
    const known = this.#kinds.get(key);
    if (known && known.measured["mcp.protocol.version"] === protocolVersion) return known;
    const measured: Attributes = {
      ...this.#base,
      "mcp.method.name": method,
      "mcp.protocol.version": protocolVersion,
    };
    let name = method;
    if (method === "tools/call" && named !== undefined) {
      measured["gen_ai.tool.name"] = named;
      measured["gen_ai.operation.name"] = "execute_tool";
      name = `${method} ${named}`;
    } else if (method === "prompts/get" && named !== undefined) {
      measured["gen_ai.prompt.name"] = named;
      name = `${method} ${named}`;
    }
    const kind = { name, measured: Object.freeze(measured) };
    if (this.#kinds.size < MAX_KINDS) this.#kinds.set(key, kind);
    return kind;
  }

  /**
   * The request's params with the span's W3C trace context in `_meta` (SEP-414: `traceparent`,
   * `tracestate`, unprefixed), after whatever the application's propagators add (baggage, say).
   * A span without a valid context (no provider registered, none passed) adds nothing; one that
   * was sampled out still carries its context, flags `00`, as W3C Trace Context says.
   */
  #carry(parent: Context, span: Span, params: JsonObject | undefined): JsonObject | undefined {
    const api = this.#api;
    const sc = span.spanContext();
    if (!api.isSpanContextValid(sc)) return params;
    const own = params?._meta;
    const meta: JsonObject = typeof own === "object" && own !== null && !Array.isArray(own) ? { ...own } : {};
    // The application's propagators, when it registered any (the no-op one has no fields).
    if (api.propagation.fields().length > 0) api.propagation.inject(api.trace.setSpan(parent, span), meta);
    meta.traceparent = `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    const state = sc.traceState?.serialize();
    if (state) meta.tracestate = state;
    else delete meta.tracestate;
    return { ...params, _meta: meta };
  }

  /** Marks a span failed with the public code; its status says the reason word, never a server's text. */
  #failSpan(span: Span, code: string, reason: string | undefined, rpcCode: number | undefined): void {
    span.setAttribute("error.type", code);
    if (rpcCode !== undefined) span.setAttribute("rpc.response.status_code", String(rpcCode));
    span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: reason ? `${code}: ${reason}` : code });
  }

  #endAttempt(): void {
    for (const span of this.#stages.values()) span.end();
    this.#stages.clear();
    this.#attempt?.end();
    this.#attempt = undefined;
  }

  #endRoot(): void {
    this.#endAttempt();
    this.#establishing = false;
    this.#attemptContext = undefined;
    this.#root.end();
  }
}
