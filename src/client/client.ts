import type { Era, TransportMode } from "../errors/codes.ts";
import { configError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { piecesAt } from "../jsonrpc/long-strings.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { OutputValidator } from "../options/output-validator.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import { declaredExtensions, type Extensions } from "../protocol/extensions.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import type {
  CallOptions,
  Client,
  CompletionArgument,
  CompletionContext,
  ListKind,
  LoadSkillOptions,
  OperationOptions,
  TaskCallOptions,
  TaskRunOptions,
  ToolArguments,
} from "./api.ts";
import type { Established } from "./established.ts";
import { type ListBounds, listAll, listPage, PROMPTS, RESOURCES, TEMPLATES } from "./listing.ts";
import type { NotificationHandler } from "./notification-hub.ts";
import { ClientNotifications } from "./notifications.ts";
import { checkMethod, checkUri } from "./operation-checks.ts";
import { CALL_ROUTE, RequestPath } from "./request-path.ts";
import { malformedResult } from "./result-errors.ts";
import type {
  CallToolResult,
  CompleteResult,
  CompletionRef,
  CreateTaskResult,
  GetPromptResult,
  LoadedSkill,
  LoggingLevel,
  LoggingMessage,
  Page,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdate,
  Skill,
  Task,
  Tool,
} from "./results.ts";
import { LOGGING_LEVELS } from "./results.ts";
import { completeResult, getPromptResult, isLoggingLevel, readResourceResult } from "./shapes.ts";
import { loadSkill, requireSkills, SKILLS, skillOf } from "./skills.ts";
import { Subscriptions } from "./subscriptions.ts";
import { Tasks } from "./tasks.ts";
import { ToolCalls } from "./tool-calls.ts";
import { ToolCatalog } from "./tool-catalog.ts";

/** What the client takes beyond the resolved connect options. */
export interface ClientExtras {
  /** The connection's redactor: knows the configured secrets, and learns those met since. */
  redactor: Redactor;
  /** A replacement output validator, or `false` for none (default: @cfworker/json-schema). */
  validateOutput?: OutputValidator | false;
  /** Which establishment attempt produced this client (1-based). */
  attempts?: number;
}

/**
 * The client behind the `Client` interface: what was negotiated, and the operations. It wires
 * the parts together and owns its session; each operation is a short composition of them: the
 * request path (request-path.ts: every operation's deadline, in-flight slot, era envelope and
 * error projection), listings (listing.ts), tools and their tasks (tool-calls.ts, over the tool
 * catalog and tasks.ts), and notifications (notifications.ts; in 2026-07-28 with the listen
 * stream of subscriptions.ts).
 */
export class ConnectedClient implements Client {
  readonly protocolVersion: ProtocolVersion;
  readonly era: Era;
  readonly transportMode: TransportMode;
  readonly serverInfo: { name?: string; version?: string } | undefined;
  readonly serverCapabilities: JsonObject;
  readonly serverExtensions: Extensions;
  readonly instructions: string | undefined;
  readonly stages: Established["stages"];
  readonly eraHint: Established["eraHint"];
  readonly attempts: number;
  readonly #session: Session;
  readonly #redactor: Redactor;
  readonly #path: RequestPath;
  readonly #listBounds: ListBounds;
  readonly #catalog: ToolCatalog;
  readonly #tools: ToolCalls;
  readonly #notifications: ClientNotifications;
  /** 2026-07-28 only: the listen stream that carries list changes and resource updates. */
  readonly #subscriptions: Subscriptions | undefined;
  #closing: Promise<void> | undefined;

  constructor(established: Established, options: ResolvedOptions, extras: ClientExtras) {
    this.protocolVersion = established.protocolVersion;
    this.era = established.era;
    this.transportMode = established.mode;
    this.serverInfo = established.serverInfo;
    this.serverCapabilities = established.capabilities;
    this.serverExtensions = declaredExtensions(established.capabilities);
    this.instructions = established.instructions;
    this.stages = established.stages;
    this.eraHint = established.eraHint;
    this.attempts = extras.attempts ?? 1;
    this.#session = established.session;
    this.#redactor = extras.redactor;
    const negotiated = {
      era: this.era,
      transportMode: this.transportMode,
      protocolVersion: this.protocolVersion,
    };
    this.#path = new RequestPath({
      ...negotiated,
      session: this.#session,
      options,
      redactor: this.#redactor,
    });
    this.#listBounds = {
      maxListPages: options.maxListPages,
      maxTools: options.maxTools,
      redactor: this.#redactor,
    };
    this.#catalog = new ToolCatalog({
      era: this.era,
      transportMode: this.transportMode,
      maxTools: options.maxTools,
      maxToolSchemaBytes: options.maxToolSchemaBytes,
      redactor: this.#redactor,
      validateOutput: extras.validateOutput,
    });
    const tasks = new Tasks({
      era: this.era,
      serverCapabilities: this.serverCapabilities,
      session: this.#session,
      path: this.#path,
      clock: options.clock,
      redactor: this.#redactor,
      toolResult: (name, raw, signal) => this.#tools.toolResult(name, raw, signal),
    });
    this.#tools = new ToolCalls({
      era: this.era,
      protocolVersion: this.protocolVersion,
      path: this.#path,
      listBounds: this.#listBounds,
      redactor: this.#redactor,
      tools: this.#catalog,
      tasks,
    });
    this.#subscriptions =
      this.era === "modern"
        ? new Subscriptions({
            session: this.#session,
            path: this.#path,
            clock: options.clock,
            maxFrameBytes: options.maxFrameBytes,
            redactor: this.#redactor,
            serverCapabilities: this.serverCapabilities,
          })
        : undefined;
    this.#notifications = new ClientNotifications(this.#session, this.#subscriptions, () =>
      this.#catalog.invalidate(),
    );
  }

  get state() {
    return this.#session.state;
  }

  get cachedTools(): Tool[] | undefined {
    return this.#catalog.cached;
  }

  async ping(options: OperationOptions = {}): Promise<void> {
    // 2026-07-28 dropped ping; discovery is the request every modern server must answer.
    const method = this.era === "modern" ? "server/discover" : "ping";
    await this.#path.operation(method, undefined, CALL_ROUTE, options);
  }

  // ---- tools and tasks ----

  listTools(options: OperationOptions = {}): Promise<Tool[]> {
    return this.#tools.listTools(options);
  }

  listToolsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Tool>> {
    return this.#tools.listToolsPage(cursor, options);
  }

  callTool(
    name: string,
    args: ToolArguments,
    options: TaskCallOptions,
  ): Promise<CallToolResult | CreateTaskResult>;
  callTool(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult>;
  callTool(
    name: string,
    args: ToolArguments = {},
    options: CallOptions & { task?: TaskCallOptions["task"] } = {},
  ): Promise<CallToolResult | CreateTaskResult> {
    return this.#tools.callTool(name, args, options);
  }

  callToolAsTask(
    name: string,
    args: ToolArguments = {},
    options: TaskRunOptions = {},
  ): Promise<CallToolResult> {
    return this.#tools.callToolAsTask(name, args, options);
  }

  getTask(taskId: string, options: OperationOptions = {}): Promise<Task> {
    return this.#tools.getTask(taskId, options);
  }

  getTaskResult(taskId: string, options: OperationOptions = {}): Promise<CallToolResult> {
    return this.#tools.getTaskResult(taskId, options);
  }

  listTasks(options: OperationOptions = {}): Promise<Task[]> {
    return this.#tools.listTasks(options);
  }

  listTasksPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Task>> {
    return this.#tools.listTasksPage(cursor, options);
  }

  cancelTask(taskId: string, options: OperationOptions = {}): Promise<Task | undefined> {
    return this.#tools.cancelTask(taskId, options);
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
    // 2026-07-28 has no resources/subscribe: the URI joins the client's listen stream.
    if (this.#subscriptions) return this.#subscriptions.subscribe(checkUri(uri), options);
    await this.#path.operation("resources/subscribe", { uri }, CALL_ROUTE, options);
  }

  async unsubscribeResource(uri: string, options: OperationOptions = {}): Promise<void> {
    if (this.#subscriptions) return this.#subscriptions.unsubscribe(checkUri(uri), options);
    await this.#path.operation("resources/unsubscribe", { uri }, CALL_ROUTE, options);
  }

  // ---- prompts, completion, logging ----

  async listSkills(options: OperationOptions = {}): Promise<Skill[]> {
    requireSkills(this.serverExtensions);
    return listAll(this.#path, SKILLS, this.#listBounds, options);
  }

  async listSkillsPage(cursor?: string, options: OperationOptions = {}): Promise<Page<Skill>> {
    requireSkills(this.serverExtensions);
    return listPage(this.#path, SKILLS, cursor, this.#redactor, options);
  }

  async getSkill(uri: string, options: OperationOptions = {}): Promise<Skill> {
    requireSkills(this.serverExtensions);
    return skillOf(await this.#path.operation("skills/get", { uri: checkUri(uri) }, CALL_ROUTE, options));
  }

  loadSkill(nameOrUri: string, options: LoadSkillOptions = {}): Promise<LoadedSkill> {
    return loadSkill(this, nameOrUri, options);
  }

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

  // ---- anything else ----

  async request(method: string, params?: JsonObject, options: CallOptions = {}): Promise<JsonObject> {
    checkMethod(method, params);
    // A tools/call mirrors its x-mcp-header arguments into headers as callTool does (modern HTTP).
    const headerParams =
      method === "tools/call" && typeof params?.name === "string"
        ? this.#catalog.headerParams(params.name)
        : undefined;
    // Whatever the method does is unknown to the client: a failure after it left may have had its effect.
    return this.#path.operation(
      method,
      params,
      { stage: "call", phase: "call", effect: "unknown", headerParams },
      options,
    );
  }

  async notify(method: string, params?: JsonObject, options: OperationOptions = {}): Promise<void> {
    checkMethod(method, params);
    await this.#path.notify(method, params, options);
  }

  // ---- notifications ----

  onNotification(method: string, handler: NotificationHandler): () => void {
    return this.#notifications.on(method, handler);
  }

  onLogMessage(handler: (message: LoggingMessage) => void | Promise<void>): () => void {
    return this.#notifications.onLogMessage(handler);
  }

  onListChanged(kind: ListKind, handler: () => void | Promise<void>): () => void {
    return this.#notifications.onListChanged(kind, handler);
  }

  onResourceUpdated(handler: (update: ResourceUpdate) => void | Promise<void>): () => void {
    return this.#notifications.onResourceUpdated(handler);
  }

  onTaskStatus(handler: (task: Task) => void | Promise<void>): () => void {
    return this.#notifications.onTaskStatus(handler);
  }

  redact<T>(value: T): T {
    return this.#redactor.redactDocument(value, piecesAt);
  }

  close(): Promise<void> {
    this.#subscriptions?.close();
    this.#closing ??= this.#session.close().catch(() => {});
    this.#notifications.clear();
    return this.#closing;
  }

  #malformed(message: string): never {
    throw malformedResult(this.#redactor, message);
  }
}
