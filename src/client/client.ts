import type { Established } from "../connect/establish.ts";
import type { CallEffect, Phase, Stage } from "../errors/codes.ts";
import { limitError, protocolError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { forCall, toPublicError } from "../errors/to-public.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { Reply } from "../jsonrpc/session.ts";
import { raceAbort } from "../lifecycle/abort.ts";
import { CallClock } from "../lifecycle/call-clock.ts";
import { Slots } from "../lifecycle/slots.ts";
import { LIMITS } from "../options/limits.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import { limit } from "../options/resolve.ts";
import {
  type HeaderParam,
  headerParamsOf,
  modernHeaders,
  withModernMeta,
} from "../protocol/modern-headers.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import type { Era, TransportMode } from "../transport/transport.ts";
import { handlerFor } from "./handlers.ts";

export interface Tool {
  name: string;
  description?: string;
  inputSchema: JsonObject;
  [key: string]: JsonValue | undefined;
}

export interface CallToolResult {
  content: JsonValue[];
  isError?: boolean;
  structuredContent?: JsonObject;
  [key: string]: JsonValue | undefined;
}

/** Per-operation options: the caller's signal, and overrides of the phase's budget for this one operation. */
export interface OperationOptions {
  /** Cancels this operation only (its code stays `cancelled`, distinct from a timeout). */
  signal?: AbortSignal;
  /** This operation's time budget in ms (default: its phase's). */
  timeoutMs?: number;
  /** This operation's byte ceiling for its reply (default: its phase's). */
  maxResponseBytes?: number;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export interface CallOptions extends OperationOptions {
  /** Receives the server's progress notifications for this call (asks for them with a progress token). */
  onProgress?: (progress: Progress) => void;
  /**
   * Let each progress notification restart the call's clock: `timeoutMs` then bounds the silence
   * between notifications, and `maxTotalTimeoutMs` the whole call (default 10 × timeoutMs).
   */
  resetTimeoutOnProgress?: boolean;
  /** The absolute limit for a call whose clock progress may restart, in ms (max 3600000). */
  maxTotalTimeoutMs?: number;
}

let progressTokens = 0;

/** Requests that may answer `input_required` in 2026-07-28 (multi round-trip). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/**
 * A ready client: what was negotiated, and the operations. It owns its session; `close()` is
 * idempotent and every call gets the same promise. Nothing is ever re-sent behind the caller's
 * back: a failed or timed-out operation is reported, not retried.
 */
export class Client {
  readonly protocolVersion: ProtocolVersion;
  readonly era: Era;
  readonly transportMode: TransportMode;
  readonly serverInfo: { name?: string; version?: string } | undefined;
  readonly serverCapabilities: JsonObject;
  readonly instructions: string | undefined;
  /** How establishment spent its time, stage by stage. */
  readonly stages: Established["stages"];
  /** Whether a remembered era shortened detection (`used`), proved wrong (`dropped`), or was not there. */
  readonly eraHint: Established["eraHint"];
  readonly #o: ResolvedOptions;
  readonly #e: Established;
  readonly #headerParams = new Map<string, HeaderParam[]>();
  readonly #slots: Slots;
  #tools: Tool[] | undefined;
  #closing: Promise<void> | undefined;

  constructor(established: Established, options: ResolvedOptions) {
    this.#e = established;
    this.#o = options;
    this.#slots = new Slots(options.maxInFlight);
    this.protocolVersion = established.protocolVersion;
    this.era = established.era;
    this.transportMode = established.mode;
    this.serverInfo = established.serverInfo;
    this.serverCapabilities = established.capabilities;
    this.instructions = established.instructions;
    this.stages = established.stages;
    this.eraHint = established.eraHint;
  }

  /** The open/closing/closed state of the underlying session. */
  get state() {
    return this.#e.session.state;
  }

  /** Tools listed during establishment (with `prefetchTools`), else undefined. */
  get cachedTools(): Tool[] | undefined {
    return this.#tools;
  }

  /** All the server's tools, every page, under the discovery phase's budgets and the tool ceilings. */
  async listTools(options: OperationOptions = {}): Promise<Tool[]> {
    const tools = await this.#list("tools/list", "tools", "list_tools", "discovery", options, (raw) =>
      this.#admitTool(raw),
    );
    this.#tools = tools as Tool[];
    return this.#tools;
  }

  /**
   * Calls one tool, once. A failure is reported, never retried: after a timeout or a lost
   * connection the error's `effect` is `unknown`, since the tool may have run.
   */
  async callTool(name: string, args: JsonObject = {}, options: CallOptions = {}): Promise<CallToolResult> {
    const result = await this.#operation(
      "tools/call",
      { name, arguments: args },
      "call",
      "call",
      options,
      this.#headerParams.get(name),
    );
    if (!Array.isArray(result.content)) {
      throw protocolError(
        { stage: "call", phase: "call", redactor: this.#o.redactor },
        "malformed_result",
        "the tool result had no content array",
      );
    }
    return result as CallToolResult;
  }

  async listResources(options: OperationOptions = {}): Promise<JsonObject[]> {
    return this.#list("resources/list", "resources", "call", "call", options, (r) => r);
  }

  async listResourceTemplates(options: OperationOptions = {}): Promise<JsonObject[]> {
    return this.#list("resources/templates/list", "resourceTemplates", "call", "call", options, (r) => r);
  }

  async readResource(uri: string, options: OperationOptions = {}): Promise<JsonObject> {
    return this.#operation("resources/read", { uri }, "call", "call", options);
  }

  async listPrompts(options: OperationOptions = {}): Promise<JsonObject[]> {
    return this.#list("prompts/list", "prompts", "call", "call", options, (r) => r);
  }

  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: OperationOptions = {},
  ): Promise<JsonObject> {
    return this.#operation("prompts/get", { name, arguments: args }, "call", "call", options);
  }

  /** Closes the session and releases everything it owns. Idempotent; never rejects. */
  close(): Promise<void> {
    this.#closing ??= this.#e.session.close().catch(() => {});
    return this.#closing;
  }

  // ---- internals ----

  #admitTool(raw: JsonObject): JsonObject | undefined {
    if (typeof raw.name !== "string" || typeof raw.inputSchema !== "object" || raw.inputSchema === null)
      return undefined;
    let schemaBytes: number;
    try {
      schemaBytes = Buffer.byteLength(JSON.stringify(raw.inputSchema));
    } catch {
      // Nested too deep to serialise: no schema a tool can use is like that.
      throw limitError(
        { stage: "list_tools", phase: "discovery", redactor: this.#o.redactor },
        "tool_schema_too_deep",
        "a tool's input schema is nested too deeply to be used",
        undefined,
        { maxToolSchemaBytes: this.#o.maxToolSchemaBytes },
      );
    }
    if (schemaBytes > this.#o.maxToolSchemaBytes) {
      throw limitError(
        { stage: "list_tools", phase: "discovery", redactor: this.#o.redactor },
        "tool_schema_too_large",
        `a tool's input schema passed the ${this.#o.maxToolSchemaBytes}-byte ceiling`,
        schemaBytes,
        { maxToolSchemaBytes: this.#o.maxToolSchemaBytes },
      );
    }
    if (this.era === "modern" && this.transportMode !== "stdio") {
      let params: ReturnType<typeof headerParamsOf>;
      try {
        params = headerParamsOf(raw.inputSchema);
      } catch {
        params = undefined;
      }
      // A tool whose x-mcp-header annotations break the rules is left out, as the spec requires.
      if (!params) return undefined;
      this.#headerParams.set(raw.name, params);
    }
    return raw;
  }

  async #list(
    method: string,
    key: string,
    stage: Stage,
    phase: Phase,
    options: OperationOptions,
    admit: (raw: JsonObject) => JsonObject | undefined,
  ): Promise<JsonObject[]> {
    const deadline = this.#deadlineFor(phase, options);
    const where = { stage, phase, redactor: this.#o.redactor };
    const out: JsonObject[] = [];
    let cursor: string | undefined;
    const seen = new Set<string>();
    let release: (() => void) | undefined;
    try {
      release = await this.#slots.acquire(deadline.signal);
      for (let page = 1; ; page++) {
        if (page > this.#o.maxListPages) {
          throw limitError(
            where,
            "too_many_pages",
            `the list went past ${this.#o.maxListPages} pages`,
            undefined,
            {
              maxListPages: this.#o.maxListPages,
            },
          );
        }
        const reply = await this.#send(
          method,
          cursor ? { cursor } : undefined,
          deadline.signal,
          options,
          phase,
        );
        const items = reply.result[key];
        if (!Array.isArray(items))
          throw protocolError(where, "malformed_result", `the ${method} result had no ${key} array`);
        for (const item of items) {
          if (typeof item !== "object" || item === null || Array.isArray(item)) continue;
          const admitted = admit(item);
          if (admitted) out.push(admitted);
        }
        if (method === "tools/list" && out.length > this.#o.maxTools) {
          throw limitError(
            where,
            "too_many_tools",
            `the server listed more than ${this.#o.maxTools} tools`,
            undefined,
            {
              maxTools: this.#o.maxTools,
            },
          );
        }
        const next = reply.result.nextCursor;
        if (typeof next !== "string" || next === "") return out;
        // A server that hands back a cursor it already gave would loop forever.
        if (seen.has(next)) throw protocolError(where, "cursor_loop", `the ${method} cursor repeated`);
        seen.add(next);
        cursor = next;
      }
    } catch (error) {
      throw this.#publicError(error, stage, phase, deadline, "none");
    } finally {
      release?.();
      deadline.dispose();
    }
  }

  async #operation(
    method: string,
    params: JsonObject,
    stage: Stage,
    phase: Phase,
    options: CallOptions,
    headerParams?: HeaderParam[],
  ): Promise<JsonObject> {
    const deadline = this.#deadlineFor(phase, options);
    let sent = false;
    const unsubscribe = this.#watchProgress(options, deadline);
    let release: (() => void) | undefined;
    try {
      // Back-pressure: wait for a slot within this operation's own budget; until then nothing left.
      release = await this.#slots.acquire(deadline.signal);
      const base = unsubscribe ? { ...params, _meta: { progressToken: unsubscribe.token } } : params;
      let current = base;
      for (let round = 0; ; round++) {
        // A call whose signal is already aborted never leaves: its effect is known to be none.
        if (deadline.signal.aborted) throw deadline.signal.reason;
        // Nor does one on a session that is already closing: request() refuses it unsent.
        if (this.#e.session.closure) throw this.#e.session.closure;
        sent = true;
        const reply = await this.#send(method, current, deadline.signal, options, phase, headerParams);
        const resultType = reply.result.resultType ?? "complete";
        if (resultType === "complete") return reply.result;
        if (resultType !== "input_required" || this.era !== "modern" || !MRTR_METHODS.has(method)) {
          throw protocolError(
            { stage, phase, redactor: this.#o.redactor },
            "unknown_result_type",
            "the server sent a result type this client does not know",
          );
        }
        if (round + 1 >= this.#o.maxInputRounds) {
          throw limitError(
            { stage, phase, redactor: this.#o.redactor },
            "too_many_input_rounds",
            `the server asked for input more than ${this.#o.maxInputRounds} times`,
            undefined,
            {
              maxInputRounds: this.#o.maxInputRounds,
            },
          );
        }
        current = await this.#nextRound(base, reply.result, stage, phase, deadline.signal);
      }
    } catch (error) {
      throw this.#publicError(
        error,
        stage,
        phase,
        deadline,
        sent && method === "tools/call" ? "unknown" : "none",
      );
    } finally {
      release?.();
      unsubscribe?.stop();
      deadline.dispose();
    }
  }

  /** Routes this call's progress notifications to its listener, restarting its clock if allowed. */
  #watchProgress(options: CallOptions, deadline: CallClock): { token: string; stop: () => void } | undefined {
    if (!options.onProgress) return undefined;
    const token = `tether-${++progressTokens}`;
    const listener = options.onProgress;
    const stop = this.#e.session.notifications.add((n) => {
      if (n.method !== "notifications/progress" || n.params?.progressToken !== token) return;
      const p = n.params;
      if (typeof p.progress !== "number") return;
      if (options.resetTimeoutOnProgress) deadline.touch();
      try {
        listener({
          progress: p.progress,
          total: typeof p.total === "number" ? p.total : undefined,
          message: typeof p.message === "string" ? this.#o.redactor.serverText(p.message) : undefined,
        });
      } catch {
        // The caller's listener failing does not fail the call.
      }
    });
    return { token, stop };
  }

  /**
   * The retry of an `input_required` round: the same params, `requestState` echoed exactly, and
   * answers to what the server asked, from the application's handlers. Without a handler an
   * elicitation is declined and roots are empty; sampling cannot be faked, so it fails.
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
    const requests = result.inputRequests;
    if (typeof requests === "object" && requests !== null && !Array.isArray(requests)) {
      const responses: JsonObject = {};
      for (const [key, req] of Object.entries(requests)) {
        const r = typeof req === "object" && req !== null && !Array.isArray(req) ? req : {};
        const method = typeof r.method === "string" ? r.method : "";
        const p =
          typeof r.params === "object" && r.params !== null && !Array.isArray(r.params) ? r.params : {};
        const handler = handlerFor(this.#o.handlers, method);
        if (handler) responses[key] = await raceAbort(Promise.resolve(handler(p, { signal })), signal);
        else if (method === "elicitation/create") responses[key] = { action: "decline" };
        else if (method === "roots/list") responses[key] = { roots: [] };
        else {
          throw protocolError(
            { stage, phase, redactor: this.#o.redactor },
            "input_unsupported",
            "the server asked for input this client was given no handler for",
          );
        }
      }
      next.inputResponses = responses;
    }
    return next;
  }

  #deadlineFor(phase: Phase, options: CallOptions): CallClock {
    const budget = this.#o[phase];
    const timeoutMs =
      options.timeoutMs === undefined ? budget.timeoutMs : limit("timeoutMs", options.timeoutMs, "timeoutMs");
    const maxMs = options.resetTimeoutOnProgress
      ? options.maxTotalTimeoutMs === undefined
        ? Math.min(timeoutMs * 10, LIMITS.timeoutMs.max)
        : limit("maxTotalTimeoutMs", options.maxTotalTimeoutMs, "timeoutMs")
      : timeoutMs;
    return new CallClock(this.#o.clock, timeoutMs, maxMs, options.signal);
  }

  #send(
    method: string,
    params: JsonObject | undefined,
    signal: AbortSignal,
    options: OperationOptions,
    phase: Phase,
    headerParams?: HeaderParam[],
  ): Promise<Reply> {
    const session = this.#e.session;
    const modern = this.era === "modern";
    const http = this.transportMode !== "stdio";
    const maxBytes = options.maxResponseBytes ?? this.#o[phase].maxResponseBytes;
    const finalParams = modern
      ? withModernMeta(params, this.protocolVersion, this.#o.clientInfo, this.#o.capabilities)
      : params;
    return session.request(method, finalParams, {
      signal,
      maxBytes,
      headers: modern && http ? modernHeaders(this.protocolVersion, method, params, headerParams) : undefined,
      // Modern HTTP cancels by closing the reply stream; everything else says so explicitly.
      cancelOnAbort: !(modern && http),
    });
  }

  #publicError(
    error: unknown,
    stage: Stage,
    phase: Phase,
    deadline: CallClock,
    effect: CallEffect,
  ): TetherError {
    const limits = { timeoutMs: deadline.idleMs };
    const e = toPublicError(error, { stage, phase, redactor: this.#o.redactor, limits, effect });
    return forCall(e, {
      stage,
      phase,
      redactor: this.#o.redactor,
      effect: e.code === "remote_error" ? "none" : effect,
    });
  }
}
