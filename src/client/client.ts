import type { Era, TransportMode } from "../errors/codes.ts";
import { configError, protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject, JsonRpcNotification } from "../jsonrpc/messages.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { OutputValidator } from "../options/output-validator.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
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
import type { Established } from "./established.ts";
import { type ListBounds, type ListSpec, listAll, listPage } from "./listing.ts";
import { type NotificationHandler, NotificationHub } from "./notification-hub.ts";
import { CALL_ROUTE, RequestPath, type Route } from "./request-path.ts";
import { malformedResult } from "./result-errors.ts";
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
import { Tasks } from "./tasks.ts";
import { ToolCatalog } from "./tool-catalog.ts";

export type { CallOptions, Client, OperationOptions, Progress } from "./api.ts";
export type { CallToolResult, Tool } from "./results.ts";

/** What the client takes beyond the resolved connect options. */
export interface ClientExtras {
  /** The connection's redactor: knows the configured secrets, and learns those met since. */
  redactor: Redactor;
  /** A replacement output validator, or `false` for none (default: @cfworker/json-schema). */
  validateOutput?: OutputValidator | false;
  /** Which establishment attempt produced this client (1-based). */
  attempts?: number;
}

const RESOURCES: ListSpec<Resource> = {
  method: "resources/list",
  key: "resources",
  stage: "call",
  phase: "call",
  admit: admitResource,
};
const TEMPLATES: ListSpec<ResourceTemplate> = {
  method: "resources/templates/list",
  key: "resourceTemplates",
  stage: "call",
  phase: "call",
  admit: admitTemplate,
};
const PROMPTS: ListSpec<Prompt> = {
  method: "prompts/list",
  key: "prompts",
  stage: "call",
  phase: "call",
  admit: admitPrompt,
};
const TASKS: ListSpec<Task> = {
  method: "tasks/list",
  key: "tasks",
  stage: "call",
  phase: "call",
  admit: (raw) => parseTask(raw),
};

/**
 * The client behind the `Client` interface: what was negotiated, and the operations, each a
 * short composition of the parts it is built from: the request path (request-path.ts: every
 * operation's deadline, in-flight slot, era envelope and error projection), listings
 * (listing.ts), the tools known from them (tool-catalog.ts), tasks (tasks.ts) and the
 * application's notification handlers (notification-hub.ts). It owns its session.
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
  readonly #session: Session;
  readonly #redactor: Redactor;
  readonly #path: RequestPath;
  readonly #listBounds: ListBounds;
  readonly #tools: ToolCatalog;
  readonly #tasks: Tasks;
  readonly #hub = new NotificationHub();
  #closing: Promise<void> | undefined;

  constructor(established: Established, options: ResolvedOptions, extras: ClientExtras) {
    this.protocolVersion = established.protocolVersion;
    this.era = established.era;
    this.transportMode = established.mode;
    this.serverInfo = established.serverInfo;
    this.serverCapabilities = established.capabilities;
    this.instructions = established.instructions;
    this.stages = established.stages;
    this.eraHint = established.eraHint;
    this.attempts = extras.attempts ?? 1;
    this.#session = established.session;
    this.#redactor = extras.redactor;
    const connection = { ...this.#negotiated(), session: this.#session, options, redactor: this.#redactor };
    this.#path = new RequestPath(connection);
    this.#listBounds = {
      maxListPages: options.maxListPages,
      maxTools: options.maxTools,
      redactor: this.#redactor,
    };
    this.#tools = new ToolCatalog({
      era: this.era,
      transportMode: this.transportMode,
      maxTools: options.maxTools,
      maxToolSchemaBytes: options.maxToolSchemaBytes,
      redactor: this.#redactor,
      validateOutput: extras.validateOutput,
    });
    this.#tasks = new Tasks({
      era: this.era,
      serverCapabilities: this.serverCapabilities,
      session: this.#session,
      path: this.#path,
      clock: options.clock,
      redactor: this.#redactor,
      toolResult: (name, raw, signal) => this.#toolResult(name, raw, signal),
    });
    this.#session.notifications.add((n) => this.#received(n));
  }

  get state() {
    return this.#session.state;
  }

  get cachedTools(): Tool[] | undefined {
    return this.#tools.cached;
  }

  // ---- tools ----

  async ping(options: OperationOptions = {}): Promise<void> {
    // 2026-07-28 dropped ping; discovery is the request every modern server must answer.
    const method = this.era === "modern" ? "server/discover" : "ping";
    await this.#path.operation(method, undefined, CALL_ROUTE, options);
  }

  async listTools(options: OperationOptions = {}): Promise<Tool[]> {
    const known = new Map<string, Tool>();
    const tools = await listAll(
      this.#path,
      {
        method: "tools/list",
        key: "tools",
        stage: "list_tools",
        phase: "discovery",
        admit: (raw) => {
          const tool = this.#tools.admit(raw);
          if (tool) known.set(tool.name, tool);
          return tool;
        },
      },
      this.#listBounds,
      options,
    );
    this.#tools.listed(tools, known);
    return tools;
  }

  async listToolsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Tool>> {
    const spec: ListSpec<Tool> = {
      method: "tools/list",
      key: "tools",
      stage: "list_tools",
      phase: "discovery",
      admit: (raw) => this.#tools.admit(raw),
    };
    const page = await listPage(this.#path, spec, cursor, this.#redactor, options);
    this.#tools.paged(page.items);
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
    const tool = this.#tools.get(name);
    const modern = this.era === "modern";
    if (options.task === undefined) {
      // A tool that must run as a task is run as one, to its end, so the caller gets its result.
      if (tool?.execution?.taskSupport === "required" && this.#tasks.offered(tool))
        return await this.callToolAsTask(name, args, options);
      const raw = await this.#path.operation(
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
    const asTask = this.#tasks.offered(tool);
    const params: JsonObject = { name, arguments: args };
    if (asTask && !modern) params.task = ttlMs === undefined ? {} : { ttl: ttlMs };
    const raw = await this.#path.operation(
      "tools/call",
      params,
      { ...this.#callRoute(name), task: asTask },
      options,
    );
    if (asTask) {
      const created = createTaskResult(raw, modern);
      if (created === undefined) throw malformedResult(this.#redactor, "the server's task was malformed");
      if (created !== "result") {
        this.#tasks.remember(created.task.taskId, name);
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
    const bounds = this.#path.bounds("call", options);
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
      return await this.#tasks.await(task, name, budget, options.onStatus, (t) => {
        task = t;
      });
    } catch (error) {
      if (task && !isTerminal(task.status)) await this.#tasks.abandon(task.taskId);
      throw this.#tasks.outcome(error, bounds.clock, task ? "unknown" : undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  // ---- resources ----

  async listResources(options: OperationOptions = {}): Promise<Resource[]> {
    return listAll(this.#path, RESOURCES, this.#listBounds, options);
  }

  async listResourcesPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Resource>> {
    return listPage(this.#path, RESOURCES, cursor, this.#redactor, options);
  }

  async listResourceTemplates(options: OperationOptions = {}): Promise<ResourceTemplate[]> {
    return listAll(this.#path, TEMPLATES, this.#listBounds, options);
  }

  async listResourceTemplatesPage(
    cursor?: string,
    options: OperationOptions = {},
  ): Promise<Page<ResourceTemplate>> {
    return listPage(this.#path, TEMPLATES, cursor, this.#redactor, options);
  }

  async readResource(uri: string, options: OperationOptions = {}): Promise<ReadResourceResult> {
    const raw = await this.#path.operation("resources/read", { uri }, CALL_ROUTE, options);
    return readResourceResult(raw) ?? this.#malformed("the resources/read result had no contents array");
  }

  async subscribeResource(uri: string, options: OperationOptions = {}): Promise<void> {
    this.#legacyOnly("resources/subscribe");
    await this.#path.operation("resources/subscribe", { uri }, CALL_ROUTE, options);
  }

  async unsubscribeResource(uri: string, options: OperationOptions = {}): Promise<void> {
    this.#legacyOnly("resources/unsubscribe");
    await this.#path.operation("resources/unsubscribe", { uri }, CALL_ROUTE, options);
  }

  // ---- prompts, completion, logging ----

  async listPrompts(options: OperationOptions = {}): Promise<Prompt[]> {
    return listAll(this.#path, PROMPTS, this.#listBounds, options);
  }

  async listPromptsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Prompt>> {
    return listPage(this.#path, PROMPTS, cursor, this.#redactor, options);
  }

  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: OperationOptions = {},
  ): Promise<GetPromptResult> {
    const raw = await this.#path.operation("prompts/get", { name, arguments: args }, CALL_ROUTE, options);
    return getPromptResult(raw) ?? this.#malformed("the prompts/get result had no messages array");
  }

  async complete(
    ref: CompletionRef,
    argument: CompletionArgument,
    context?: CompletionContext,
    options: OperationOptions = {},
  ): Promise<CompleteResult> {
    const params: JsonObject = { ref, argument: { name: argument.name, value: argument.value } };
    if (context?.arguments !== undefined) params.context = { arguments: context.arguments };
    const raw = await this.#path.operation("completion/complete", params, CALL_ROUTE, options);
    return completeResult(raw) ?? this.#malformed("the completion/complete result was malformed");
  }

  async setLoggingLevel(level: LoggingLevel, options: OperationOptions = {}): Promise<void> {
    if (!isLoggingLevel(level))
      throw configError("invalid_option", `level must be one of ${LOGGING_LEVELS.join(", ")}`);
    if (this.era === "modern") {
      this.#path.logLevel = level;
      return;
    }
    await this.#path.operation("logging/setLevel", { level }, CALL_ROUTE, options);
  }

  // ---- tasks ----

  async getTask(taskId: string, options: OperationOptions = {}): Promise<Task> {
    const raw = await this.#path.operation("tasks/get", { taskId }, CALL_ROUTE, options);
    return parseTask(raw) ?? this.#malformed("the tasks/get result was not a task");
  }

  async getTaskResult(taskId: string, options: OperationOptions = {}): Promise<CallToolResult> {
    const name = this.#tasks.toolOf(taskId);
    if (this.era === "legacy") {
      const raw = await this.#path.operation("tasks/result", { taskId }, CALL_ROUTE, options);
      return await this.#toolResult(name, raw, options.signal);
    }
    // 2026-07-28 has no tasks/result: the result arrives with the task once it has ended.
    const bounds = this.#path.bounds("call", options);
    const budget = {
      signal: bounds.clock.signal,
      timeoutMs: bounds.clock.maxMs,
      maxResponseBytes: bounds.maxBytes,
    };
    try {
      const task = await this.getTask(taskId, budget);
      return await this.#tasks.await(task, name, budget, undefined, () => {});
    } catch (error) {
      throw this.#tasks.outcome(error, bounds.clock, undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  async listTasks(options: OperationOptions = {}): Promise<Task[]> {
    this.#legacyOnly("tasks/list");
    return listAll(this.#path, TASKS, this.#listBounds, options);
  }

  async listTasksPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Task>> {
    this.#legacyOnly("tasks/list");
    return listPage(this.#path, TASKS, cursor, this.#redactor, options);
  }

  async cancelTask(taskId: string, options: OperationOptions = {}): Promise<Task | undefined> {
    const raw = await this.#path.operation("tasks/cancel", { taskId }, CALL_ROUTE, options);
    // 2026-07-28 acknowledges with an empty result; 2025-11-25 answers with the task.
    if (this.era === "modern") return undefined;
    return parseTask(raw) ?? this.#malformed("the tasks/cancel result was not a task");
  }

  // ---- anything else ----

  async request(method: string, params?: JsonObject, options: OperationOptions = {}): Promise<JsonObject> {
    checkMethod(method, params);
    // Whatever the method does is unknown to the client: a failure after it left may have had its effect.
    return this.#path.operation(method, params, { stage: "call", phase: "call", effect: "unknown" }, options);
  }

  async notify(method: string, params?: JsonObject, options: OperationOptions = {}): Promise<void> {
    checkMethod(method, params);
    await this.#path.notify(method, params, options);
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
    this.#closing ??= this.#session.close().catch(() => {});
    this.#hub.clear();
    return this.#closing;
  }

  // ---- internals ----

  #negotiated() {
    return { era: this.era, transportMode: this.transportMode, protocolVersion: this.protocolVersion };
  }

  /** Every notification the session admitted: the client's own caches first, then the application's handlers. */
  #received(n: JsonRpcNotification): void {
    if (n.method === "notifications/tools/list_changed") this.#tools.invalidate();
    this.#hub.dispatch(n);
  }

  #callRoute(name: string): Route {
    return { stage: "call", phase: "call", effect: "unknown", headerParams: this.#tools.headerParams(name) };
  }

  #toolResult(
    name: string | undefined,
    raw: JsonObject,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    return this.#tools.toolResult(name, raw, signal, (s) => this.listTools({ signal: s }));
  }

  #malformed(message: string): never {
    throw malformedResult(this.#redactor, message);
  }

  /** Methods 2026-07-28 removed are refused unsent there, rather than sent to fail. */
  #legacyOnly(method: string): void {
    if (this.era !== "modern") return;
    throw protocolError(
      { stage: "call", phase: "call", redactor: this.#redactor, effect: "none" },
      "not_in_era",
      `${method} is not part of protocol ${this.protocolVersion}`,
    );
  }
}

/** A generic request's method and params, checked before anything is sent. */
function checkMethod(method: string, params: JsonObject | undefined): void {
  if (typeof method !== "string" || method === "")
    throw configError("invalid_option", "method must be a non-empty string");
  if (params !== undefined && !isObject(params))
    throw configError("invalid_option", "params must be an object");
}

/** A task's requested time to live: absent, or a whole number of ms. */
function ttlOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0)
    throw configError("invalid_limit", "task.ttlMs must be a positive whole number of milliseconds");
  return value;
}
