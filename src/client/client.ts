import type { Established } from "../connect/establish.ts";
import type { CallEffect, Phase, Stage } from "../errors/codes.ts";
import { configError, limitError, protocolError, type Where } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import { forCall, toPublicError } from "../errors/to-public.ts";
import type { JsonObject, JsonRpcNotification, JsonValue } from "../jsonrpc/messages.ts";
import type { Reply } from "../jsonrpc/session.ts";
import { raceAbort } from "../lifecycle/abort.ts";
import { CallClock } from "../lifecycle/call-clock.ts";
import { Slots } from "../lifecycle/slots.ts";
import { LIMITS, MAX_CURSOR_CHARS } from "../options/limits.ts";
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
import type {
  CallOptions,
  Client,
  CompletionArgument,
  CompletionContext,
  ListKind,
  OperationOptions,
  TaskCallOptions,
  TaskRunOptions,
} from "./api.ts";
import { CursorTrail } from "./cursor-trail.ts";
import { handlerFor } from "./handlers.ts";
import { type NotificationHandler, NotificationHub } from "./notification-hub.ts";
import { defaultValidator, OutputSchemaMismatch, type OutputValidator } from "./output-schema.ts";
import type {
  CallToolResult,
  CompleteResult,
  CompletionRef,
  CreateTaskResult,
  GetPromptResult,
  LoggingLevel,
  LoggingMessage,
  Page,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdate,
  Task,
  Tool,
} from "./results.ts";
import { LOGGING_LEVELS } from "./results.ts";
import {
  admitPrompt,
  admitResource,
  admitTemplate,
  callToolResult,
  completeResult,
  createTaskResult,
  getPromptResult,
  isLoggingLevel,
  isObject,
  isTerminal,
  loggingMessage,
  parseTask,
  readResourceResult,
} from "./shapes.ts";
import { pollDelayMs, pollPause, TASK_CANCEL_GRACE_MS } from "./task-poll.ts";

export type { CallOptions, Client, OperationOptions, Progress } from "./api.ts";
export type { CallToolResult, Tool } from "./results.ts";

let progressTokens = 0;

/** Requests that may answer `input_required` in 2026-07-28 (multi round-trip). */
const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The 2026-07-28 tasks extension, declared in the capabilities of a request that accepts a task. */
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Where 2026-07-28 carries the log level, on every request (it has no `logging/setLevel`). */
const LOG_LEVEL_META = "io.modelcontextprotocol/logLevel";

/** Task ids this client created, kept to check their results against their tool's schema. */
const MAX_REMEMBERED_TASKS = 256;

/** What the client takes beyond the resolved connect options. */
export interface ClientExtras {
  /** A replacement output validator, or `false` for none (default: @cfworker/json-schema). */
  validateOutput?: OutputValidator | false;
  /** Which establishment attempt produced this client (1-based). */
  attempts?: number;
}

/** How one operation goes through the request path. */
interface Route {
  stage: Stage;
  phase: Phase;
  /** The effect reported for a failure after the request left (before it: always `none`). */
  effect: CallEffect;
  headerParams?: HeaderParam[];
  /** The request accepts a task in reply (2026-07-28: declares the tasks extension). */
  task?: boolean;
}

/** One operation's bounds, resolved before anything is sent. */
interface Bounds {
  clock: CallClock;
  maxBytes: number;
}

/**
 * The client behind the `Client` interface. It owns its session; every operation, typed or
 * generic, runs through `#bounded` (deadline, in-flight slot, error projection) and `#send`
 * (era envelope, headers, byte ceiling).
 */
export class ConnectedClient implements Client {
  readonly protocolVersion: ProtocolVersion;
  readonly era: Era;
  readonly transportMode: TransportMode;
  readonly serverInfo: { name?: string; version?: string } | undefined;
  readonly serverCapabilities: JsonObject;
  readonly instructions: string | undefined;
  readonly stages: Established["stages"];
  readonly eraHint: Established["eraHint"];
  readonly attempts: number;
  readonly #o: ResolvedOptions;
  readonly #e: Established;
  readonly #validateOutput: OutputValidator | false | undefined;
  readonly #headerParams = new Map<string, HeaderParam[]>();
  readonly #slots: Slots;
  readonly #hub = new NotificationHub();
  #tools: Tool[] | undefined;
  /** Tools seen in listings (full or by page) since the last change notice, by name. */
  #known = new Map<string, Tool>();
  /** Whether `#known` holds a full listing. */
  #listed = false;
  /** The one listing made to find an unknown tool's output schema, until the tools change. */
  #schemaFetch: Promise<void> | undefined;
  /** The log level 2026-07-28 requests carry in `_meta`, once the caller set one. */
  #logLevel: LoggingLevel | undefined;
  readonly #taskTools = new Map<string, string>();
  #closing: Promise<void> | undefined;

  constructor(established: Established, options: ResolvedOptions, extras: ClientExtras = {}) {
    this.#e = established;
    this.#o = options;
    this.#validateOutput = extras.validateOutput;
    this.#slots = new Slots(options.maxInFlight);
    this.protocolVersion = established.protocolVersion;
    this.era = established.era;
    this.transportMode = established.mode;
    this.serverInfo = established.serverInfo;
    this.serverCapabilities = established.capabilities;
    this.instructions = established.instructions;
    this.stages = established.stages;
    this.eraHint = established.eraHint;
    this.attempts = extras.attempts ?? 1;
    established.session.notifications.add((n) => this.#received(n));
  }

  get state() {
    return this.#e.session.state;
  }

  get cachedTools(): Tool[] | undefined {
    return this.#tools;
  }

  // ---- tools ----

  async ping(options: OperationOptions = {}): Promise<void> {
    // 2026-07-28 dropped ping; discovery is the request every modern server must answer.
    const method = this.era === "modern" ? "server/discover" : "ping";
    await this.#operation(method, undefined, { stage: "call", phase: "call", effect: "none" }, options);
  }

  async listTools(options: OperationOptions = {}): Promise<Tool[]> {
    const known = new Map<string, Tool>();
    const tools = await this.#list("tools/list", "tools", "list_tools", "discovery", options, (raw) => {
      const tool = this.#admitTool(raw);
      if (tool) known.set(tool.name, tool);
      return tool;
    });
    this.#tools = tools;
    this.#known = known;
    this.#listed = true;
    return tools;
  }

  async listToolsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Tool>> {
    const page = await this.#page("tools/list", "tools", "list_tools", "discovery", cursor, options, (raw) =>
      this.#admitTool(raw),
    );
    for (const tool of page.items) if (this.#known.size < this.#o.maxTools) this.#known.set(tool.name, tool);
    return page;
  }

  callTool(
    name: string,
    args: JsonObject,
    options: TaskCallOptions,
  ): Promise<CallToolResult | CreateTaskResult>;
  callTool(name: string, args?: JsonObject, options?: CallOptions): Promise<CallToolResult>;
  async callTool(
    name: string,
    args: JsonObject = {},
    options: CallOptions & { task?: TaskCallOptions["task"] } = {},
  ): Promise<CallToolResult | CreateTaskResult> {
    const tool = this.#known.get(name);
    const modern = this.era === "modern";
    if (options.task === undefined) {
      // A tool that must run as a task is run as one, to its end, so the caller gets its result.
      if (tool?.execution?.taskSupport === "required" && this.#tasksOffered(tool))
        return await this.callToolAsTask(name, args, options);
      const raw = await this.#operation(
        "tools/call",
        { name, arguments: args },
        this.#callRoute(name),
        options,
      );
      return await this.#toolResult(name, raw, options.signal);
    }
    if (typeof options.task !== "object" || options.task === null)
      throw configError("invalid_option", "task must be an object");
    const ttlMs = ttlOf(options.task.ttlMs);
    const asTask = this.#tasksOffered(tool);
    const params: JsonObject = { name, arguments: args };
    if (asTask && !modern) params.task = ttlMs === undefined ? {} : { ttl: ttlMs };
    const raw = await this.#operation(
      "tools/call",
      params,
      { ...this.#callRoute(name), task: asTask },
      options,
    );
    if (asTask) {
      const created = createTaskResult(raw, modern);
      if (created === undefined) throw this.#malformed("the server's task was malformed");
      if (created !== "result") {
        this.#rememberTask(created.task.taskId, name);
        return created;
      }
    }
    return await this.#toolResult(name, raw, options.signal);
  }

  async callToolAsTask(
    name: string,
    args: JsonObject = {},
    options: TaskRunOptions = {},
  ): Promise<CallToolResult> {
    const ttlMs = ttlOf(options.ttlMs);
    const bounds = this.#bounds("call", options);
    const budget = {
      signal: bounds.clock.signal,
      timeoutMs: bounds.clock.maxMs,
      maxResponseBytes: bounds.maxBytes,
    };
    let task: Task | undefined;
    try {
      const created = await this.callTool(name, args, { ...budget, task: { ttlMs } });
      if (!("task" in created)) return created;
      task = created.task;
      return await this.#awaitTask(task, name, budget, options.onStatus, (t) => {
        task = t;
      });
    } catch (error) {
      if (task && !isTerminal(task.status)) await this.#abandonTask(task.taskId);
      throw this.#outcome(error, bounds.clock, task ? "unknown" : undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  // ---- resources ----

  async listResources(options: OperationOptions = {}): Promise<Resource[]> {
    return this.#list("resources/list", "resources", "call", "call", options, admitResource);
  }

  async listResourcesPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Resource>> {
    return this.#page("resources/list", "resources", "call", "call", cursor, options, admitResource);
  }

  async listResourceTemplates(options: OperationOptions = {}): Promise<ResourceTemplate[]> {
    return this.#list(
      "resources/templates/list",
      "resourceTemplates",
      "call",
      "call",
      options,
      admitTemplate,
    );
  }

  async listResourceTemplatesPage(
    cursor?: string,
    options: OperationOptions = {},
  ): Promise<Page<ResourceTemplate>> {
    return this.#page(
      "resources/templates/list",
      "resourceTemplates",
      "call",
      "call",
      cursor,
      options,
      admitTemplate,
    );
  }

  async readResource(uri: string, options: OperationOptions = {}): Promise<ReadResourceResult> {
    const raw = await this.#operation("resources/read", { uri }, this.#route(), options);
    return readResourceResult(raw) ?? this.#fail("the resources/read result had no contents array");
  }

  async subscribeResource(uri: string, options: OperationOptions = {}): Promise<void> {
    this.#legacyOnly("resources/subscribe");
    await this.#operation("resources/subscribe", { uri }, this.#route(), options);
  }

  async unsubscribeResource(uri: string, options: OperationOptions = {}): Promise<void> {
    this.#legacyOnly("resources/unsubscribe");
    await this.#operation("resources/unsubscribe", { uri }, this.#route(), options);
  }

  // ---- prompts, completion, logging ----

  async listPrompts(options: OperationOptions = {}): Promise<Prompt[]> {
    return this.#list("prompts/list", "prompts", "call", "call", options, admitPrompt);
  }

  async listPromptsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Prompt>> {
    return this.#page("prompts/list", "prompts", "call", "call", cursor, options, admitPrompt);
  }

  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: OperationOptions = {},
  ): Promise<GetPromptResult> {
    const raw = await this.#operation("prompts/get", { name, arguments: args }, this.#route(), options);
    return getPromptResult(raw) ?? this.#fail("the prompts/get result had no messages array");
  }

  async complete(
    ref: CompletionRef,
    argument: CompletionArgument,
    context?: CompletionContext,
    options: OperationOptions = {},
  ): Promise<CompleteResult> {
    const params: JsonObject = { ref, argument: { name: argument.name, value: argument.value } };
    if (context?.arguments !== undefined) params.context = { arguments: context.arguments };
    const raw = await this.#operation("completion/complete", params, this.#route(), options);
    return completeResult(raw) ?? this.#fail("the completion/complete result was malformed");
  }

  async setLoggingLevel(level: LoggingLevel, options: OperationOptions = {}): Promise<void> {
    if (!isLoggingLevel(level))
      throw configError("invalid_option", `level must be one of ${LOGGING_LEVELS.join(", ")}`);
    if (this.era === "modern") {
      this.#logLevel = level;
      return;
    }
    await this.#operation("logging/setLevel", { level }, this.#route(), options);
  }

  // ---- tasks ----

  async getTask(taskId: string, options: OperationOptions = {}): Promise<Task> {
    const raw = await this.#operation("tasks/get", { taskId }, this.#route(), options);
    return parseTask(raw) ?? this.#fail("the tasks/get result was not a task");
  }

  async getTaskResult(taskId: string, options: OperationOptions = {}): Promise<CallToolResult> {
    const name = this.#taskTools.get(taskId);
    if (this.era === "legacy") {
      const raw = await this.#operation("tasks/result", { taskId }, this.#route(), options);
      return await this.#toolResult(name, raw, options.signal);
    }
    // 2026-07-28 has no tasks/result: the result arrives with the task once it has ended.
    const bounds = this.#bounds("call", options);
    const budget = {
      signal: bounds.clock.signal,
      timeoutMs: bounds.clock.maxMs,
      maxResponseBytes: bounds.maxBytes,
    };
    try {
      const task = await this.getTask(taskId, budget);
      return await this.#awaitTask(task, name, budget, undefined, () => {});
    } catch (error) {
      throw this.#outcome(error, bounds.clock, undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  async listTasks(options: OperationOptions = {}): Promise<Task[]> {
    this.#legacyOnly("tasks/list");
    return this.#list("tasks/list", "tasks", "call", "call", options, (raw) => parseTask(raw));
  }

  async listTasksPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Task>> {
    this.#legacyOnly("tasks/list");
    return this.#page("tasks/list", "tasks", "call", "call", cursor, options, (raw) => parseTask(raw));
  }

  async cancelTask(taskId: string, options: OperationOptions = {}): Promise<Task | undefined> {
    const raw = await this.#operation("tasks/cancel", { taskId }, this.#route(), options);
    // 2026-07-28 acknowledges with an empty result; 2025-11-25 answers with the task.
    if (this.era === "modern") return undefined;
    return parseTask(raw) ?? this.#fail("the tasks/cancel result was not a task");
  }

  // ---- anything else ----

  async request(method: string, params?: JsonObject, options: OperationOptions = {}): Promise<JsonObject> {
    if (typeof method !== "string" || method === "")
      throw configError("invalid_option", "method must be a non-empty string");
    if (params !== undefined && !isObject(params))
      throw configError("invalid_option", "params must be an object");
    // Whatever the method does is unknown to the client: a failure after it left may have had its effect.
    return this.#operation(method, params, { stage: "call", phase: "call", effect: "unknown" }, options);
  }

  async notify(method: string, params?: JsonObject, options: OperationOptions = {}): Promise<void> {
    if (typeof method !== "string" || method === "")
      throw configError("invalid_option", "method must be a non-empty string");
    if (params !== undefined && !isObject(params))
      throw configError("invalid_option", "params must be an object");
    const modernHttp = this.era === "modern" && this.transportMode !== "stdio";
    await this.#bounded(
      { stage: "call", phase: "call", effect: "unknown" },
      options,
      async (bounds, sent) => {
        sent();
        await this.#e.session.notify(
          method,
          params,
          bounds.clock.signal,
          modernHttp ? modernHeaders(this.protocolVersion, method, params) : undefined,
        );
      },
    );
  }

  // ---- notifications ----

  onNotification(method: string, handler: NotificationHandler): () => void {
    if (typeof method !== "string" || method === "")
      throw configError("invalid_option", "method must be a non-empty string");
    if (typeof handler !== "function") throw configError("invalid_option", "handler must be a function");
    return this.#hub.on(method, handler);
  }

  onLogMessage(handler: (message: LoggingMessage) => void | Promise<void>): () => void {
    return this.onNotification("notifications/message", (n) => {
      const message = loggingMessage(n.params);
      return message ? handler(message) : undefined;
    });
  }

  onListChanged(kind: ListKind, handler: () => void | Promise<void>): () => void {
    if (kind !== "tools" && kind !== "resources" && kind !== "prompts")
      throw configError("invalid_option", "kind must be tools, resources or prompts");
    return this.onNotification(`notifications/${kind}/list_changed`, () => handler());
  }

  onResourceUpdated(handler: (update: ResourceUpdate) => void | Promise<void>): () => void {
    return this.onNotification("notifications/resources/updated", (n) =>
      typeof n.params.uri === "string" ? handler({ uri: n.params.uri }) : undefined,
    );
  }

  onTaskStatus(handler: (task: Task) => void | Promise<void>): () => void {
    const deliver: NotificationHandler = (n) => {
      const task = parseTask(n.params);
      return task ? handler(task) : undefined;
    };
    // 2025-11-25 says notifications/tasks/status; the 2026-07-28 extension, notifications/tasks.
    const offs = [
      this.onNotification("notifications/tasks/status", deliver),
      this.onNotification("notifications/tasks", deliver),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#e.session.close().catch(() => {});
    this.#hub.clear();
    return this.#closing;
  }

  // ---- internals ----

  /** Every notification the session admitted: the client's own caches first, then the application's handlers. */
  #received(n: JsonRpcNotification): void {
    if (n.method === "notifications/tools/list_changed") {
      this.#tools = undefined;
      this.#known = new Map();
      this.#listed = false;
      this.#schemaFetch = undefined;
    }
    this.#hub.dispatch(n);
  }

  #route(): Route {
    return { stage: "call", phase: "call", effect: "none" };
  }

  #callRoute(name: string): Route {
    return { stage: "call", phase: "call", effect: "unknown", headerParams: this.#headerParams.get(name) };
  }

  /**
   * Whether a call may ask for a task. 2025-11-25: only when the server declared task-augmented
   * tool calls and the tool (if listed) allows them; otherwise the spec forbids asking. 2026-07-28:
   * the request declares the extension and the server decides.
   */
  #tasksOffered(tool: Tool | undefined): boolean {
    if (this.era === "modern") return true;
    const tasks = this.serverCapabilities.tasks;
    const requests = isObject(tasks) ? tasks.requests : undefined;
    const tools = isObject(requests) ? requests.tools : undefined;
    if (!isObject(tools) || !isObject(tools.call)) return false;
    if (!tool) return true;
    const support = tool.execution?.taskSupport;
    return support === "optional" || support === "required";
  }

  #rememberTask(taskId: string, name: string): void {
    if (this.#taskTools.size >= MAX_REMEMBERED_TASKS) {
      const [oldest] = this.#taskTools.keys();
      if (oldest !== undefined) this.#taskTools.delete(oldest);
    }
    this.#taskTools.set(taskId, name);
  }

  /**
   * Polls a task until it ends and returns its tool result. 2025-11-25: `tasks/result` once it
   * completed or failed (or needs input, which it then asks for on that request's stream).
   * 2026-07-28: the result or error comes with the terminal task; input it asks for is answered
   * by the application's handlers and sent with `tasks/update`, each request key once.
   */
  async #awaitTask(
    first: Task,
    name: string | undefined,
    budget: OperationOptions,
    onStatus: ((task: Task) => void) | undefined,
    seen: (task: Task) => void,
  ): Promise<CallToolResult> {
    const modern = this.era === "modern";
    const answered = new Set<string>();
    let task = first;
    let detail: JsonObject = {};
    const signal = budget.signal as AbortSignal;
    for (;;) {
      seen(task);
      try {
        onStatus?.(task);
      } catch {
        // The caller's listener failing does not fail the wait.
      }
      if (
        !modern &&
        (task.status === "completed" || task.status === "failed" || task.status === "input_required")
      ) {
        try {
          const raw = await this.#operation("tasks/result", { taskId: task.taskId }, this.#route(), budget);
          seen({ ...task, status: "completed" });
          return await this.#toolResult(name, raw, signal);
        } catch (error) {
          throw this.#taskFailure(error);
        }
      }
      if (modern && task.status === "completed") {
        const result = isObject(detail.result) ? detail.result : undefined;
        if (!result) throw this.#malformed("the completed task carried no result");
        return await this.#toolResult(name, result, signal);
      }
      if (modern && task.status === "failed") throw this.#taskError("task_failed", detail.error);
      if (task.status === "cancelled") throw this.#taskError("task_cancelled", undefined);
      if (modern && task.status === "input_required" && isObject(detail.inputRequests)) {
        const fresh: JsonObject = {};
        for (const [key, request] of Object.entries(detail.inputRequests)) {
          if (answered.has(key)) continue;
          answered.add(key);
          fresh[key] = request;
        }
        if (Object.keys(fresh).length > 0) {
          const inputResponses = await this.#answerInputs(fresh, "call", "call", signal);
          await this.#operation(
            "tasks/update",
            { taskId: task.taskId, inputResponses },
            this.#route(),
            budget,
          );
        }
      }
      await pollPause(this.#o.clock, pollDelayMs(task), signal, (early) =>
        this.#e.session.notifications.add((n) => {
          if (
            (n.method === "notifications/tasks/status" || n.method === "notifications/tasks") &&
            n.params?.taskId === task.taskId
          )
            early();
        }),
      );
      const raw = await this.#operation("tasks/get", { taskId: task.taskId }, this.#route(), budget);
      const next = parseTask(raw);
      if (!next || next.taskId !== task.taskId)
        throw this.#malformed("the tasks/get result was not the task");
      task = next;
      detail = raw;
    }
  }

  /** A failed task's `tasks/result` error: the tool ran and failed, so its effect is not `none`. */
  #taskFailure(error: unknown): unknown {
    if (!(error instanceof TetherError) || error.code !== "remote_error") return error;
    return new TetherError({
      code: "remote_error",
      reason: "task_failed",
      stage: "call",
      phase: "call",
      message: `the task failed with JSON-RPC error ${error.rpcCode}`,
      rpcCode: error.rpcCode,
      rpcMessage: error.rpcMessage,
      effect: "unknown",
      cause: error,
      redactor: this.#o.redactor,
    });
  }

  /** A task that ended without a result: failed (with the server's JSON-RPC error) or cancelled. */
  #taskError(reason: "task_failed" | "task_cancelled", error: JsonValue | undefined): TetherError {
    const rpc = isObject(error) ? error : {};
    const code = typeof rpc.code === "number" && Number.isInteger(rpc.code) ? rpc.code : undefined;
    return new TetherError({
      code: "remote_error",
      reason,
      stage: "call",
      phase: "call",
      message:
        reason === "task_cancelled"
          ? "the server cancelled the task"
          : `the task failed${code === undefined ? "" : ` with JSON-RPC error ${code}`}`,
      rpcCode: code,
      rpcMessage: typeof rpc.message === "string" ? rpc.message : undefined,
      effect: "unknown",
      redactor: this.#o.redactor,
    });
  }

  /**
   * Tells the server an abandoned task is no longer wanted. The call's own budget is spent, so the
   * request has a grace of its own; its outcome changes nothing for the caller.
   */
  async #abandonTask(taskId: string): Promise<void> {
    if (this.#e.session.closure) return;
    try {
      await this.#operation("tasks/cancel", { taskId }, this.#route(), { timeoutMs: TASK_CANCEL_GRACE_MS });
    } catch {
      // Best effort: the task's TTL ends it on the server anyway.
    }
  }

  /**
   * The error a multi-step operation reports: when its own budget ran out or its caller cancelled,
   * that (with the whole budget as the limit), whatever step it interrupted; otherwise the step's error.
   */
  #outcome(error: unknown, clock: CallClock, effect: CallEffect | undefined): TetherError {
    const where = { stage: "call" as const, phase: "call" as const, redactor: this.#o.redactor };
    if (clock.signal.aborted) {
      const stepEffect = error instanceof TetherError ? error.effect : undefined;
      return this.#publicError(clock.signal.reason, "call", "call", clock, effect ?? stepEffect ?? "none");
    }
    const e = toPublicError(error, where);
    return effect && e.effect !== "done" ? forCall(e, { ...where, effect }) : e;
  }

  /** A tool's result, shape and output schema checked. */
  async #toolResult(
    name: string | undefined,
    raw: JsonObject,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    const result = callToolResult(raw) ?? this.#fail("the tool result had no content array");
    if (name !== undefined) await this.#checkOutput(name, result, signal);
    return result;
  }

  /**
   * Checks `structuredContent` against the tool's `outputSchema`. The schema comes from the last
   * listing; a tool not listed yet whose result carries structured content makes the client list
   * the tools once (until they change). A tool that reported an error is not checked, nor is
   * anything when the caller switched checking off.
   */
  async #checkOutput(name: string, result: CallToolResult, signal: AbortSignal | undefined): Promise<void> {
    if (this.#validateOutput === false || result.isError === true) return;
    if (!this.#known.has(name) && !this.#listed && result.structuredContent !== undefined) {
      this.#schemaFetch ??= this.listTools({ signal }).then(
        () => {},
        () => {},
      );
      await this.#schemaFetch;
    }
    const schema = this.#known.get(name)?.outputSchema;
    if (!schema) return;
    const where: Where = { stage: "call", phase: "call", redactor: this.#o.redactor, effect: "done" };
    if (result.structuredContent === undefined)
      throw protocolError(
        where,
        "output_schema_mismatch",
        "the tool has an outputSchema but its result carried no structuredContent",
      );
    let verdict: { valid: boolean; errors?: string[] };
    try {
      const validate = this.#validateOutput ?? (await defaultValidator());
      verdict = validate(schema, result.structuredContent);
    } catch (error) {
      throw protocolError(where, "output_schema_invalid", "the tool's outputSchema could not be used", error);
    }
    if (!verdict.valid) {
      const n = verdict.errors?.length ?? 0;
      throw protocolError(
        where,
        "output_schema_mismatch",
        `the tool's structuredContent does not match its outputSchema${n > 0 ? ` (${n} finding${n === 1 ? "" : "s"})` : ""}`,
        new OutputSchemaMismatch(verdict.errors ?? []),
      );
    }
  }

  /** A result the server sent that the client cannot use: the request ran, so the effect is `done`. */
  #malformed(message: string): TetherError {
    return protocolError(
      { stage: "call", phase: "call", redactor: this.#o.redactor, effect: "done" },
      "malformed_result",
      message,
    );
  }

  #fail(message: string): never {
    throw this.#malformed(message);
  }

  /** Methods 2026-07-28 removed are refused unsent there, rather than sent to fail. */
  #legacyOnly(method: string): void {
    if (this.era !== "modern") return;
    throw protocolError(
      { stage: "call", phase: "call", redactor: this.#o.redactor, effect: "none" },
      "not_in_era",
      `${method} is not part of protocol ${this.protocolVersion}`,
    );
  }

  #admitTool(raw: JsonObject): Tool | undefined {
    if (typeof raw.name !== "string" || !isObject(raw.inputSchema)) return undefined;
    // An output schema that is not an object cannot be checked against: the tool is left out.
    if (raw.outputSchema !== undefined && !isObject(raw.outputSchema)) return undefined;
    this.#checkSchemaSize(raw.inputSchema);
    if (raw.outputSchema !== undefined) this.#checkSchemaSize(raw.outputSchema);
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
    return raw as Tool;
  }

  #checkSchemaSize(schema: JsonObject): void {
    const where = { stage: "list_tools" as const, phase: "discovery" as const, redactor: this.#o.redactor };
    let schemaBytes: number;
    try {
      schemaBytes = Buffer.byteLength(JSON.stringify(schema));
    } catch {
      // Nested too deep to serialise: no schema a tool can use is like that.
      throw limitError(
        where,
        "tool_schema_too_deep",
        "a tool's schema is nested too deeply to be used",
        undefined,
        {
          maxToolSchemaBytes: this.#o.maxToolSchemaBytes,
        },
      );
    }
    if (schemaBytes > this.#o.maxToolSchemaBytes) {
      throw limitError(
        where,
        "tool_schema_too_large",
        `a tool's schema passed the ${this.#o.maxToolSchemaBytes}-byte ceiling`,
        schemaBytes,
        { maxToolSchemaBytes: this.#o.maxToolSchemaBytes },
      );
    }
  }

  /**
   * One operation's budget and ceiling, validated before anything else happens: a bad override
   * is a `config` error naming the option (P2), never a ceiling switched off.
   */
  #bounds(phase: Phase, options: CallOptions): Bounds {
    const budget = this.#o[phase];
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
    return { clock: new CallClock(this.#o.clock, timeoutMs, maxMs, options.signal), maxBytes };
  }

  /**
   * The one request path's frame: bounds resolved first (config errors come out as they are),
   * then a slot within the operation's own budget (back-pressure: until then nothing left), the
   * work, and one projection of whatever it threw onto the operation's stage and phase.
   */
  async #bounded<T>(
    route: Route,
    options: CallOptions,
    work: (bounds: Bounds, sent: () => void) => Promise<T>,
  ): Promise<T> {
    const bounds = this.#bounds(route.phase, options);
    let sent = false;
    let release: (() => void) | undefined;
    try {
      release = await this.#slots.acquire(bounds.clock.signal);
      return await work(bounds, () => {
        sent = true;
      });
    } catch (error) {
      throw this.#publicError(error, route.stage, route.phase, bounds.clock, sent ? route.effect : "none");
    } finally {
      release?.();
      bounds.clock.dispose();
    }
  }

  async #list<T>(
    method: string,
    key: string,
    stage: Stage,
    phase: Phase,
    options: OperationOptions,
    admit: (raw: JsonObject) => T | undefined,
  ): Promise<T[]> {
    return this.#bounded({ stage, phase, effect: "none" }, options, async (bounds) => {
      const where = { stage, phase, redactor: this.#o.redactor };
      const out: T[] = [];
      let cursor: string | undefined;
      const trail = new CursorTrail(MAX_CURSOR_CHARS);
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
        const read = await this.#readPage(method, key, stage, phase, cursor, bounds, admit);
        out.push(...read.items);
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
        if (read.nextCursor === undefined) return out;
        // A server that hands back a cursor it already gave would loop forever.
        if (trail.admit(read.nextCursor) === "repeated")
          throw protocolError(where, "cursor_loop", `the ${method} cursor repeated`);
        cursor = read.nextCursor;
      }
    });
  }

  async #page<T>(
    method: string,
    key: string,
    stage: Stage,
    phase: Phase,
    cursor: string | undefined,
    options: OperationOptions,
    admit: (raw: JsonObject) => T | undefined,
  ): Promise<Page<T>> {
    if (cursor !== undefined && (typeof cursor !== "string" || cursor.length > MAX_CURSOR_CHARS))
      throw configError(
        "invalid_option",
        `cursor must be a string of at most ${MAX_CURSOR_CHARS} characters`,
      );
    return this.#bounded({ stage, phase, effect: "none" }, options, (bounds) =>
      this.#readPage(method, key, stage, phase, cursor === "" ? undefined : cursor, bounds, admit),
    );
  }

  /** One page: its items admitted, and its cursor if it has a next one (bounded in length, S8). */
  async #readPage<T>(
    method: string,
    key: string,
    stage: Stage,
    phase: Phase,
    cursor: string | undefined,
    bounds: Bounds,
    admit: (raw: JsonObject) => T | undefined,
  ): Promise<Page<T>> {
    const where = { stage, phase, redactor: this.#o.redactor };
    const reply = await this.#send(method, cursor ? { cursor } : undefined, bounds);
    const raw = reply.result[key];
    if (!Array.isArray(raw))
      throw protocolError(where, "malformed_result", `the ${method} result had no ${key} array`);
    const items: T[] = [];
    for (const item of raw) {
      if (!isObject(item)) continue;
      const admitted = admit(item);
      if (admitted !== undefined) items.push(admitted);
    }
    const next = reply.result.nextCursor;
    if (typeof next !== "string" || next === "") return { items };
    if (next.length > MAX_CURSOR_CHARS) {
      throw limitError(
        where,
        "cursor_too_long",
        `the ${method} cursor passed ${MAX_CURSOR_CHARS} characters`,
        undefined,
        {
          maxCursorChars: MAX_CURSOR_CHARS,
        },
      );
    }
    return { items, nextCursor: next };
  }

  async #operation(
    method: string,
    params: JsonObject | undefined,
    route: Route,
    options: CallOptions,
  ): Promise<JsonObject> {
    const { stage, phase } = route;
    return this.#bounded(route, options, async (bounds, sent) => {
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
          if (bounds.clock.signal.aborted) throw bounds.clock.signal.reason;
          // Nor does one on a session that is already closing: request() refuses it unsent.
          if (this.#e.session.closure) throw this.#e.session.closure;
          sent();
          const reply = await this.#send(method, current, bounds, route);
          const resultType = reply.result.resultType ?? "complete";
          if (resultType === "complete" || (resultType === "task" && route.task === true))
            return reply.result;
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
              { maxInputRounds: this.#o.maxInputRounds },
            );
          }
          current = await this.#nextRound(base ?? {}, reply.result, stage, phase, bounds.clock.signal);
        }
      } finally {
        progress?.stop();
      }
    });
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
      next.inputResponses = await this.#answerInputs(result.inputRequests, stage, phase, signal);
    return next;
  }

  /**
   * Answers to a 2026-07-28 server's input requests (a round, or a task that needs input), from
   * the application's handlers. Without a handler an elicitation is declined and roots are empty;
   * sampling cannot be faked, so it fails.
   */
  async #answerInputs(
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
    return responses;
  }

  /**
   * Sends one request in the negotiated era's envelope: 2026-07-28 requests carry the `_meta`
   * fields (the log level too, once set; the tasks extension when the request accepts a task)
   * and, on HTTP, the standard headers.
   */
  #send(method: string, params: JsonObject | undefined, bounds: Bounds, route?: Route): Promise<Reply> {
    const session = this.#e.session;
    const modern = this.era === "modern";
    const http = this.transportMode !== "stdio";
    let finalParams = params;
    if (modern) {
      const own = isObject(params?._meta) ? params._meta : {};
      const meta = this.#logLevel ? { ...own, [LOG_LEVEL_META]: this.#logLevel } : own;
      const capabilities = route?.task ? withTasksExtension(this.#o.capabilities) : this.#o.capabilities;
      finalParams = withModernMeta(
        { ...params, _meta: meta },
        this.protocolVersion,
        this.#o.clientInfo,
        capabilities,
      );
    }
    return session.request(method, finalParams, {
      signal: bounds.clock.signal,
      maxBytes: bounds.maxBytes,
      headers:
        modern && http ? modernHeaders(this.protocolVersion, method, params, route?.headerParams) : undefined,
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

/** The caller's capabilities plus the 2026-07-28 tasks extension. */
function withTasksExtension(capabilities: JsonObject): JsonObject {
  const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
  return { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
}

/** A task's requested time to live: absent, or a whole number of ms. */
function ttlOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0)
    throw configError("invalid_limit", "task.ttlMs must be a positive whole number of milliseconds");
  return value;
}
