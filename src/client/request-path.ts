import type { CallEffect, Era, Phase, Stage, TransportMode } from "../errors/codes.ts";
import { limitError, protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { forCall, toPublicError } from "../errors/to-public.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Reply, Session } from "../jsonrpc/session.ts";
import { raceAbort } from "../lifecycle/abort.ts";
import { CallClock } from "../lifecycle/call-clock.ts";
import { Slots } from "../lifecycle/slots.ts";
import { LIMITS, limit } from "../options/limits.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import { type Extensions, TASKS_EXTENSION, withExtensions } from "../protocol/extensions.ts";
import { type HeaderParam, modernHeaders, withModernMeta } from "../protocol/modern-headers.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import type { RequestTracing } from "../tracing/api.ts";
import type { CallOptions } from "./api.ts";
import { handlerFor } from "./handlers.ts";
import type { LoggingLevel } from "./results.ts";
import { isObject } from "./shapes.ts";

/** Requests that may answer `input_required` in 2026-07-28 (multi round-trip). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The 2026-07-28 tasks extension, declared in the capabilities of a request that accepts a task. */
const TASKS: Extensions = { [TASKS_EXTENSION]: {} };

/** Where 2026-07-28 carries the log level, on every request (it has no `logging/setLevel`). */
const LOG_LEVEL_META = "io.modelcontextprotocol/logLevel";

let progressTokens = 0;

/** How one operation goes through the request path. */
export interface Route {
  stage: Stage;
  phase: Phase;
  /** The effect reported for a failure after the request left (before it: always `none`). */
  effect: CallEffect;
  headerParams?: HeaderParam[];
  /** The request accepts a task in reply (2026-07-28: declares the tasks extension). */
  task?: boolean;
}

/** An operation of the call phase that changes nothing on the server if it fails. */
export const CALL_ROUTE: Route = { stage: "call", phase: "call", effect: "none" };

/** One operation's bounds, resolved before anything is sent. */
export interface Bounds {
  clock: CallClock;
  maxBytes: number;
}

/** What the request path speaks over: the session and what was negotiated on it. */
export interface Connection {
  session: Session;
  era: Era;
  transportMode: TransportMode;
  protocolVersion: ProtocolVersion;
  options: ResolvedOptions;
  redactor: Redactor;
  /** A span per request, when `tracing` is on; undefined costs the request path one branch. */
  tracing?: RequestTracing | undefined;
}

/**
 * The one request path (M1): every operation of the client, typed or generic, goes through it.
 * `bounded` is the frame: bounds resolved first (a bad override is a `config` error naming the
 * option), then a slot within the operation's own budget (back-pressure), the work, and one
 * projection of whatever it threw onto the operation's stage, phase and effect. `operation`
 * sends a request and follows 2026-07-28 `input_required` rounds; `send` wraps it in the
 * negotiated era's envelope.
 */
export class RequestPath {
  readonly #c: Connection;
  readonly #slots: Slots;
  /** The log level 2026-07-28 requests carry in `_meta`, once the caller set one. */
  #logLevel: LoggingLevel | undefined;

  constructor(connection: Connection) {
    this.#c = connection;
    this.#slots = new Slots(connection.options.maxInFlight);
  }

  /** 2026-07-28: the level every later request carries in `_meta`. */
  set logLevel(level: LoggingLevel) {
    this.#logLevel = level;
  }

  /**
   * One operation's budget and ceiling, validated before anything else happens: a bad override
   * is a `config` error naming the option (P2), never a ceiling switched off.
   */
  bounds(phase: Phase, options: CallOptions): Bounds {
    const o = this.#c.options;
    const budget = o[phase];
    const maxBytes =
      options.maxResponseBytes === undefined
        ? budget.maxResponseBytes
        : limit("maxResponseBytes", options.maxResponseBytes, "maxResponseBytes");
    const timeoutMs =
      options.timeoutMs === undefined ? budget.timeoutMs : limit("timeoutMs", options.timeoutMs, "timeoutMs");
    const maxMs = options.resetTimeoutOnProgress
      ? options.maxTotalTimeoutMs === undefined
        ? Math.min(timeoutMs * 10, LIMITS.timeoutMs.max)
        : limit("maxTotalTimeoutMs", options.maxTotalTimeoutMs, "timeoutMs")
      : timeoutMs;
    return { clock: new CallClock(o.clock, timeoutMs, maxMs, options.signal), maxBytes };
  }

  /** The frame every operation runs in; `sent()` marks the moment its request left. */
  async bounded<T>(
    route: Route,
    options: CallOptions,
    work: (bounds: Bounds, sent: () => void) => Promise<T>,
  ): Promise<T> {
    const bounds = this.bounds(route.phase, options);
    const cancellation = bounds.clock.cancellation;
    let sent = false;
    let release: (() => void) | undefined;
    try {
      // A budget already spent (a caller's signal that had aborted) takes no slot.
      if (cancellation.aborted) throw cancellation.reason;
      // A free slot is taken at once; only a full queue makes the operation wait (back-pressure).
      release = this.#slots.tryAcquire() ?? (await this.#slots.acquire(cancellation));
      return await work(bounds, () => {
        sent = true;
      });
    } catch (error) {
      throw this.publicError(error, route.stage, route.phase, bounds.clock, sent ? route.effect : "none");
    } finally {
      release?.();
      bounds.clock.dispose();
    }
  }

  /**
   * One request through the frame, with progress routed to the caller and, in 2026-07-28, the
   * `input_required` rounds answered and retried, at most `maxInputRounds` of them.
   */
  async operation(
    method: string,
    params: JsonObject | undefined,
    route: Route,
    options: CallOptions,
  ): Promise<JsonObject> {
    let progressSeen = 0;
    const counted: CallOptions = options.onProgress
      ? {
          ...options,
          onProgress: (p) => {
            progressSeen++;
            options.onProgress?.(p);
          },
        }
      : options;
    try {
      return await this.#operation(method, params, route, counted);
    } catch (error) {
      // A fact for whoever explains the failure: progress arrived while the operation ran (and,
      // unless resetTimeoutOnProgress, extended nothing).
      if (progressSeen > 0 && error instanceof TetherError) error.progressSeen = progressSeen;
      throw error;
    }
  }

  #operation(
    method: string,
    params: JsonObject | undefined,
    route: Route,
    options: CallOptions,
  ): Promise<JsonObject> {
    const { stage, phase } = route;
    const { session, options: o, redactor } = this.#c;
    return this.bounded(route, options, async (bounds, sent) => {
      const progress = this.#watchProgress(options, bounds.clock);
      try {
        const base = progress
          ? {
              ...params,
              _meta: { ...(isObject(params?._meta) ? params._meta : {}), progressToken: progress.token },
            }
          : params;
        let current = base;
        for (let round = 0; ; round++) {
          // A request whose signal is already aborted never leaves: its effect is known to be none.
          if (bounds.clock.cancellation.aborted) throw bounds.clock.cancellation.reason;
          // Nor does one on a session that is already closing: request() refuses it unsent.
          if (session.closure) throw session.closure;
          sent();
          const reply = await this.send(method, current, bounds, route);
          const resultType = reply.result.resultType ?? "complete";
          if (resultType === "complete" || (resultType === "task" && route.task === true))
            return reply.result;
          if (resultType !== "input_required" || this.#c.era !== "modern" || !MRTR_METHODS.has(method)) {
            throw protocolError(
              { stage, phase, redactor },
              "unknown_result_type",
              "the server sent a result type this client does not know",
            );
          }
          if (round + 1 >= o.maxInputRounds) {
            throw limitError(
              { stage, phase, redactor },
              "too_many_input_rounds",
              `the server asked for input more than ${o.maxInputRounds} times`,
              undefined,
              { maxInputRounds: o.maxInputRounds },
            );
          }
          current = await this.#nextRound(base ?? {}, reply.result, stage, phase, bounds.clock.signal);
        }
      } finally {
        progress?.stop();
      }
    });
  }

  /** A notification through the frame: its effect is unknown once it left. */
  async notify(method: string, params: JsonObject | undefined, options: CallOptions): Promise<void> {
    const modernHttp = this.#c.era === "modern" && this.#c.transportMode !== "stdio";
    await this.bounded({ stage: "call", phase: "call", effect: "unknown" }, options, async (bounds, sent) => {
      sent();
      await this.#c.session.notify(
        method,
        params,
        bounds.clock.signal,
        modernHttp ? modernHeaders(this.#c.protocolVersion, method, params) : undefined,
      );
    });
  }

  /**
   * Sends one request in the negotiated era's envelope: 2026-07-28 requests carry the `_meta`
   * fields (the log level too, once set; the tasks extension when the request accepts a task)
   * and, on HTTP, the standard headers. With tracing on, the request goes out inside its span,
   * its trace context in `_meta`.
   */
  send(method: string, params: JsonObject | undefined, bounds: Bounds, route?: Route): Promise<Reply> {
    const { session, options: o, protocolVersion } = this.#c;
    const modern = this.#c.era === "modern";
    const http = this.#c.transportMode !== "stdio";
    let finalParams = params;
    if (modern) {
      const own = isObject(params?._meta) ? params._meta : {};
      const meta = this.#logLevel ? { ...own, [LOG_LEVEL_META]: this.#logLevel } : own;
      const capabilities = route?.task ? withTasksExtension(o.capabilities) : o.capabilities;
      finalParams = withModernMeta({ ...params, _meta: meta }, protocolVersion, o.clientInfo, capabilities);
    }
    const request = {
      signal: bounds.clock.cancellation,
      maxBytes: bounds.maxBytes,
      headers:
        modern && http ? modernHeaders(protocolVersion, method, params, route?.headerParams) : undefined,
      // Modern HTTP cancels by closing the reply stream; everything else says so explicitly.
      cancelOnAbort: !(modern && http),
    };
    const tracing = this.#c.tracing;
    if (tracing)
      return tracing.request(method, finalParams, session, protocolVersion, (p) =>
        session.request(method, p, request),
      );
    return session.request(method, finalParams, request);
  }

  /**
   * The public error of an operation: the failure as labelled where it was first seen, attributed
   * to the operation's stage, phase and effect (a server's refusal had no effect).
   */
  publicError(
    error: unknown,
    stage: Stage,
    phase: Phase,
    deadline: CallClock,
    effect: CallEffect,
  ): TetherError {
    const redactor = this.#c.redactor;
    const limits = { timeoutMs: deadline.idleMs };
    const e = toPublicError(error, { stage, phase, redactor, limits, effect });
    return forCall(e, { stage, phase, redactor, effect: e.code === "remote_error" ? "none" : effect });
  }

  /**
   * Answers to a 2026-07-28 server's input requests (a round, or a task that needs input), from
   * the application's handlers. Without a handler an elicitation is declined and roots are empty;
   * sampling cannot be faked, so it fails.
   */
  async answerInputs(
    requests: JsonObject,
    stage: Stage,
    phase: Phase,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const responses: JsonObject = {};
    for (const [key, req] of Object.entries(requests)) {
      const r = isObject(req) ? req : {};
      const method = typeof r.method === "string" ? r.method : "";
      const p = isObject(r.params) ? r.params : {};
      const handler = handlerFor(this.#c.options.handlers, method);
      if (handler) responses[key] = await raceAbort(Promise.resolve(handler(p, { signal })), signal);
      else if (method === "elicitation/create") responses[key] = { action: "decline" };
      else if (method === "roots/list") responses[key] = { roots: [] };
      else {
        throw protocolError(
          { stage, phase, redactor: this.#c.redactor },
          "input_unsupported",
          "the server asked for input this client was given no handler for",
        );
      }
    }
    return responses;
  }

  /** Routes this call's progress notifications to its listener, restarting its clock if allowed. */
  #watchProgress(options: CallOptions, deadline: CallClock): { token: string; stop: () => void } | undefined {
    if (!options.onProgress) return undefined;
    const token = `tether-${++progressTokens}`;
    const listener = options.onProgress;
    const stop = this.#c.session.notifications.add((n) => {
      if (n.method !== "notifications/progress" || n.params?.progressToken !== token) return;
      const p = n.params;
      if (typeof p.progress !== "number") return;
      if (options.resetTimeoutOnProgress) deadline.touch();
      try {
        listener({
          progressToken: token,
          progress: p.progress,
          total: typeof p.total === "number" ? p.total : undefined,
          message: typeof p.message === "string" ? this.#c.redactor.serverText(p.message) : undefined,
        });
      } catch {
        // The caller's listener failing does not fail the call.
      }
    });
    return { token, stop };
  }

  /**
   * The retry of an `input_required` round: the same params, `requestState` echoed exactly, and
   * answers to what the server asked.
   */
  async #nextRound(
    params: JsonObject,
    result: JsonObject,
    stage: Stage,
    phase: Phase,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    const next: JsonObject = { ...params };
    delete next.inputResponses;
    delete next.requestState;
    if (typeof result.requestState === "string") next.requestState = result.requestState;
    if (isObject(result.inputRequests))
      next.inputResponses = await this.answerInputs(result.inputRequests, stage, phase, signal);
    return next;
  }
}

/** The caller's capabilities plus the 2026-07-28 tasks extension, declared like any other. */
function withTasksExtension(capabilities: JsonObject): JsonObject {
  return withExtensions(capabilities, TASKS);
}
