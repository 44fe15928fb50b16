/**
 * A Client whose operations run in a named session held by the daemon. Each operation is one
 * request on the socket, carrying the command's budget and ceiling (the daemon's client enforces
 * them) and its signal: an abort sends a cancel, which the daemon turns into the client's own
 * cancellation (notifications/cancelled to the server) while the session stays up. Closing it
 * ends only this command's link, never the session.
 */
import type {
  CallOptions,
  Client,
  CompletionArgument,
  CompletionContext,
  ListKind,
  OperationOptions,
  TaskCallOptions,
  TaskRunOptions,
} from "../client/api.ts";
import type { NotificationHandler } from "../client/notification-hub.ts";
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
} from "../client/results.ts";
import type { Era, TransportMode } from "../errors/codes.ts";
import { interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { LIMITS } from "../options/limits.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import { CLEANUP_GRACE_MS } from "../transport/grace.ts";
import type { Frame } from "./frames.ts";
import type { SessionLink } from "./link.ts";
import {
  DISCOVERY_OPERATIONS,
  errorFromWire,
  type ListenKind,
  type Operation,
  type SessionInfo,
  sessionClosedError,
} from "./wire.ts";

/** The budget and ceiling a command gives each request it forwards, by phase (unset: the session's). */
export interface CommandBudgets {
  callTimeoutMs?: number;
  callMaxBytes?: number;
  discoveryTimeoutMs?: number;
  discoveryMaxBytes?: number;
}

/**
 * Past its own budget, how long a command waits for the daemon's answer before it gives up on
 * its own: the daemon's client settles first unless the daemon itself is stuck.
 */
const LOCAL_GRACE_MS = 2 * CLEANUP_GRACE_MS + 1_000;

type Options = OperationOptions &
  Partial<Pick<CallOptions, "onProgress" | "resetTimeoutOnProgress" | "maxTotalTimeoutMs">> &
  Partial<Pick<TaskRunOptions, "onStatus" | "ttlMs">> &
  Partial<Pick<TaskCallOptions, "task">>;

export class RemoteClient implements Client {
  readonly protocolVersion: ProtocolVersion;
  readonly era: Era;
  readonly transportMode: TransportMode;
  readonly serverInfo: { name?: string; version?: string } | undefined;
  readonly serverCapabilities: JsonObject;
  readonly instructions: string | undefined;
  readonly stages = [];
  readonly eraHint = "none" as const;
  readonly attempts: number;
  cachedTools: Tool[] | undefined;
  #ended = false;

  constructor(
    private readonly link: SessionLink,
    readonly info: SessionInfo,
    private readonly budgets: CommandBudgets = {},
  ) {
    this.protocolVersion = info.protocolVersion as ProtocolVersion;
    this.era = info.era as Era;
    this.transportMode = info.transportMode as TransportMode;
    this.serverInfo = info.serverInfo;
    this.serverCapabilities = info.serverCapabilities as JsonObject;
    this.instructions = info.instructions;
    this.attempts = info.attempts;
  }

  get state(): "open" | "closed" {
    return this.#ended || this.link.closed ? "closed" : "open";
  }

  /** Runs one operation in the session. */
  #op<T>(method: Operation, args: unknown[], options: Options = {}): Promise<T> {
    const discovery = DISCOVERY_OPERATIONS.has(method);
    const timeoutMs =
      options.timeoutMs ?? (discovery ? this.budgets.discoveryTimeoutMs : this.budgets.callTimeoutMs);
    const maxResponseBytes =
      options.maxResponseBytes ?? (discovery ? this.budgets.discoveryMaxBytes : this.budgets.callMaxBytes);
    const wire: Frame = {
      timeoutMs,
      maxResponseBytes,
      resetTimeoutOnProgress: options.resetTimeoutOnProgress,
      maxTotalTimeoutMs: options.maxTotalTimeoutMs,
      ttlMs: options.ttlMs,
      task: options.task as Frame | undefined,
      progress: options.onProgress !== undefined,
      status: options.onStatus !== undefined,
    };
    const signal = options.signal;
    const name = this.info.name;
    const sent = method === "callTool" || method === "callToolAsTask" || method === "request";
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(cancelled(signal.reason));
      let guard: NodeJS.Timeout | undefined;
      const finish = (fn: () => void) => {
        this.link.release(id);
        signal?.removeEventListener("abort", onAbort);
        if (guard) clearTimeout(guard);
        fn();
      };
      const id = this.link.request(
        { op: "call", session: name, method, args: args.map((a) => a ?? null), options: wire },
        (f) => {
          if ("progress" in f) quietly(() => options.onProgress?.(f.progress as never));
          else if ("status" in f) quietly(() => options.onStatus?.(f.status as never));
          else if ("ok" in f) finish(() => resolve(f.ok as T));
          else if ("error" in f) finish(() => reject(errorFromWire(f.error)));
          else if (f.closed === true)
            finish(() =>
              reject(
                sessionClosedError(name, "ended: its session process went away", sent ? "unknown" : "none"),
              ),
            );
        },
      );
      // A daemon that stops answering altogether cannot hold the command past its budget.
      const budget = options.maxTotalTimeoutMs ?? timeoutMs ?? this.info.callTimeoutMs;
      guard = setTimeout(
        () => finish(() => reject(stuck(budget))),
        (options.resetTimeoutOnProgress && !options.maxTotalTimeoutMs ? 10 : 1) * budget + LOCAL_GRACE_MS,
      );
      guard.unref();
      // The cancel goes to the daemon, whose client tells the server; its answer (cancelled)
      // settles the operation, or the local grace does.
      const onAbort = () => {
        this.link.tell({ op: "cancel", target: id });
        if (guard) clearTimeout(guard);
        guard = setTimeout(() => finish(() => reject(cancelled(signal?.reason))), LOCAL_GRACE_MS);
        guard.unref();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Subscribes to one notification stream of the session; the daemon forwards each as it arrives. */
  #listen(kind: ListenKind, handler: (payload: never) => void | Promise<void>, method?: string): () => void {
    let stopped = false;
    const id = this.link.request({ op: "listen", session: this.info.name, kind, method }, (f) => {
      if ("notification" in f && !stopped)
        // Handlers run detached: one that throws or never settles cannot stall the link.
        queueMicrotask(() => {
          void Promise.resolve()
            .then(() => handler(f.notification as never))
            .catch(() => {});
        });
      else if ("error" in f || f.closed === true) this.#ended = true;
    });
    return () => {
      if (stopped) return;
      stopped = true;
      this.link.tell({ op: "unlisten", target: id });
      this.link.release(id);
    };
  }

  ping(options?: OperationOptions): Promise<void> {
    return this.#op("ping", [], options);
  }
  async listTools(options?: OperationOptions): Promise<Tool[]> {
    const tools = await this.#op<Tool[]>("listTools", [], options);
    this.cachedTools = tools;
    return tools;
  }
  listToolsPage(cursor?: string, options?: OperationOptions): Promise<Page<Tool>> {
    return this.#op("listToolsPage", [cursor], options);
  }
  callTool(
    name: string,
    args: JsonObject,
    options: TaskCallOptions,
  ): Promise<CallToolResult | CreateTaskResult>;
  callTool(name: string, args?: JsonObject, options?: CallOptions): Promise<CallToolResult>;
  callTool(
    name: string,
    args?: JsonObject,
    options?: CallOptions | TaskCallOptions,
  ): Promise<CallToolResult | CreateTaskResult> {
    return this.#op("callTool", [name, args ?? {}], options);
  }
  callToolAsTask(name: string, args?: JsonObject, options?: TaskRunOptions): Promise<CallToolResult> {
    return this.#op("callToolAsTask", [name, args ?? {}], options);
  }
  listResources(options?: OperationOptions): Promise<Resource[]> {
    return this.#op("listResources", [], options);
  }
  listResourcesPage(cursor?: string, options?: OperationOptions): Promise<Page<Resource>> {
    return this.#op("listResourcesPage", [cursor], options);
  }
  listResourceTemplates(options?: OperationOptions): Promise<ResourceTemplate[]> {
    return this.#op("listResourceTemplates", [], options);
  }
  listResourceTemplatesPage(cursor?: string, options?: OperationOptions): Promise<Page<ResourceTemplate>> {
    return this.#op("listResourceTemplatesPage", [cursor], options);
  }
  readResource(uri: string, options?: OperationOptions): Promise<ReadResourceResult> {
    return this.#op("readResource", [uri], options);
  }
  subscribeResource(uri: string, options?: OperationOptions): Promise<void> {
    return this.#op("subscribeResource", [uri], options);
  }
  unsubscribeResource(uri: string, options?: OperationOptions): Promise<void> {
    return this.#op("unsubscribeResource", [uri], options);
  }
  listPrompts(options?: OperationOptions): Promise<Prompt[]> {
    return this.#op("listPrompts", [], options);
  }
  listPromptsPage(cursor?: string, options?: OperationOptions): Promise<Page<Prompt>> {
    return this.#op("listPromptsPage", [cursor], options);
  }
  getPrompt(
    name: string,
    args?: Record<string, string>,
    options?: OperationOptions,
  ): Promise<GetPromptResult> {
    return this.#op("getPrompt", [name, args], options);
  }
  complete(
    ref: CompletionRef,
    argument: CompletionArgument,
    context?: CompletionContext,
    options?: OperationOptions,
  ): Promise<CompleteResult> {
    return this.#op("complete", [ref, argument, context], options);
  }
  setLoggingLevel(level: LoggingLevel, options?: OperationOptions): Promise<void> {
    return this.#op("setLoggingLevel", [level], options);
  }
  getTask(taskId: string, options?: OperationOptions): Promise<Task> {
    return this.#op("getTask", [taskId], options);
  }
  getTaskResult(taskId: string, options?: OperationOptions): Promise<CallToolResult> {
    return this.#op("getTaskResult", [taskId], options);
  }
  listTasks(options?: OperationOptions): Promise<Task[]> {
    return this.#op("listTasks", [], options);
  }
  listTasksPage(cursor?: string, options?: OperationOptions): Promise<Page<Task>> {
    return this.#op("listTasksPage", [cursor], options);
  }
  async cancelTask(taskId: string, options?: OperationOptions): Promise<Task | undefined> {
    return (await this.#op<Task | null>("cancelTask", [taskId], options)) ?? undefined;
  }
  request(method: string, params?: JsonObject, options?: CallOptions): Promise<JsonObject> {
    return this.#op("request", [method, params], options);
  }
  async notify(method: string, params?: JsonObject, options?: OperationOptions): Promise<void> {
    await this.#op("notify", [method, params], options);
  }

  onNotification(method: string, handler: NotificationHandler): () => void {
    return this.#listen("notification", handler, method);
  }
  onLogMessage(handler: (message: LoggingMessage) => void | Promise<void>): () => void {
    return this.#listen("log", handler);
  }
  onListChanged(kind: ListKind, handler: () => void | Promise<void>): () => void {
    return this.#listen(`list_changed_${kind}`, handler);
  }
  onResourceUpdated(handler: (update: ResourceUpdate) => void | Promise<void>): () => void {
    return this.#listen("resource_updated", handler);
  }
  onTaskStatus(handler: (task: Task) => void | Promise<void>): () => void {
    return this.#listen("task_status", handler);
  }

  /** Ends this command's link; the session itself stays up. */
  /** The session process has already redacted everything it sends with its connection's secrets, which a command never holds. */
  redact<T>(value: T): T {
    return value;
  }

  async close(): Promise<void> {
    this.#ended = true;
    this.link.close();
  }
}

function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // A progress or status callback's failure is its own.
  }
}

function cancelled(reason: unknown): TetherError {
  return interruptError(new Interrupt("caller", "cancelled", undefined, reason), {
    stage: "call",
    phase: "call",
    effect: "unknown",
  });
}

function stuck(budgetMs: number): TetherError {
  return new TetherError({
    code: "timeout",
    reason: "deadline_exceeded",
    stage: "call",
    phase: "call",
    message: `the session process did not answer within the ${budgetMs} ms call budget`,
    limits: { timeoutMs: budgetMs },
    effect: "unknown",
  });
}

/**
 * Attaches a command to the named session: the link's first request asks what the session is;
 * a session that is not running is `connection`/`closed`.
 */
export async function attach(
  link: SessionLink,
  name: string,
  budgets: CommandBudgets,
): Promise<RemoteClient> {
  const answer = await link.ask(
    { op: "info", session: name },
    (budgets.callTimeoutMs ?? budgets.discoveryTimeoutMs ?? LIMITS.timeoutMs.default) + LOCAL_GRACE_MS,
  );
  if ("error" in answer) {
    link.close();
    throw errorFromWire(answer.error);
  }
  if (!("ok" in answer)) throw sessionClosedError(name, "is not running: its session process went away");
  return new RemoteClient(link, answer.ok as unknown as SessionInfo, budgets);
}
