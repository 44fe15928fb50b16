/**
 * The public face of a connected client: the interface callers name, and the options its
 * operations take. The class behind it stays inside the library (`connect()` makes it).
 */

import type { Era, TransportMode } from "../errors/codes.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Extensions } from "../protocol/extensions.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import type { Established } from "./established.ts";
import type { NotificationHandler } from "./notification-hub.ts";
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

/**
 * A tool's arguments: a JSON object, as `callTool` sends it. A member whose value is `undefined` is
 * left out (as `JSON.stringify` leaves it out), so an object type with optional members, such as the
 * `…Input` types `tether types` writes, is accepted as it is; a JsonObject always is.
 */
export type ToolArguments = { readonly [key: string]: ArgumentValue | undefined };
/** One value in a tool's arguments: JSON (arrays may be readonly; `undefined` only as an object member). */
export type ArgumentValue = null | boolean | number | string | readonly ArgumentValue[] | ToolArguments;

export interface LoadSkillOptions extends OperationOptions {
  /**
   * The most bytes the skill's files may hold in all (default and most: 16 MiB, the extension's
   * limit). Each request runs under the call budget; `signal` cancels the whole load.
   */
  maxBytes?: number;
}

/**
 * Per-operation options: the caller's signal, and overrides of the phase's budget for this one
 * operation. Overrides follow the same rules as the connect options (P2): a finite positive
 * whole number within the documented maximum, or a `config` error naming the option.
 */
export interface OperationOptions {
  /** Cancels this operation only (its code stays `cancelled`, distinct from a timeout). */
  signal?: AbortSignal;
  /** This operation's time budget in ms (default: its phase's; max 3600000). */
  timeoutMs?: number;
  /** This operation's byte ceiling for its reply (default: its phase's; max 1 GiB). */
  maxResponseBytes?: number;
}

/** A progress notification for one call. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of a tool call: the operation options, and progress. */
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

/** What a task-augmented call asks for. */
export interface TaskRequest {
  /**
   * How long the server should keep the task after it ends, in ms (2025-11-25 servers; a
   * 2026-07-28 server decides on its own).
   */
  ttlMs?: number;
}

/** A call that asks the server to run the tool as a task. */
export interface TaskCallOptions extends CallOptions {
  task: TaskRequest;
}

/** Running a tool as a task to its end: one budget covers creation, every poll and the result. */
export interface TaskRunOptions extends OperationOptions {
  /** As in TaskRequest. */
  ttlMs?: number;
  /** Told every status the client sees (creation and each poll); whatever it throws is ignored. */
  onStatus?: (task: Task) => void;
}

/** The lists whose changes a server announces. */
export type ListKind = "tools" | "resources" | "prompts";

/** The argument being completed, and what the user has typed so far. */
export interface CompletionArgument {
  name: string;
  value: string;
}

/** Arguments already chosen, which a server may use to narrow its suggestions. */
export interface CompletionContext {
  arguments?: Record<string, string>;
}

/**
 * A ready client: what was negotiated, and the operations. Every operation goes through one
 * request path with its phase's deadline, byte ceiling, in-flight bound, cancellation and error
 * projection. Nothing is ever re-sent behind the caller's back: a failed or timed-out operation
 * is reported, not retried. `close()` is idempotent and every call gets the same promise.
 */
export interface Client {
  readonly protocolVersion: ProtocolVersion;
  readonly era: Era;
  readonly transportMode: TransportMode;
  readonly serverInfo: { name?: string; version?: string } | undefined;
  readonly serverCapabilities: JsonObject;
  /**
   * The extensions the server declared (SEP-2133): each extension id with its settings object
   * (`{}` when it has none); `{}` when it declared none.
   */
  readonly serverExtensions: Extensions;
  readonly instructions: string | undefined;
  /** How establishment spent its time, stage by stage. */
  readonly stages: Established["stages"];
  /** Whether a remembered era shortened detection (`used`), proved wrong (`dropped`), or was not there. */
  readonly eraHint: Established["eraHint"];
  /** How many establishment attempts it took to get this client (1 without recovery). */
  readonly attempts: number;
  /** The open/closing/closed state of the underlying session. */
  readonly state: "connecting" | "open" | "closing" | "closed";
  /** Tools from the last full listing; undefined before one, and again once the server says they changed. */
  readonly cachedTools: Tool[] | undefined;

  /** A round trip that proves the server answers (2026-07-28 has no `ping`: a `server/discover`). */
  ping(options?: OperationOptions): Promise<void>;

  /** All the server's tools, every page, under the discovery phase's budgets and the tool ceilings. */
  listTools(options?: OperationOptions): Promise<Tool[]>;
  /** One page of tools; pass the previous page's `nextCursor` for the next one. */
  listToolsPage(cursor?: string, options?: OperationOptions): Promise<Page<Tool>>;
  /**
   * Calls one tool, once, asking the server to run it as a task. Resolves with a
   * CreateTaskResult when the server made a task of it, or with the tool's result when it ran
   * the call at once (a server that does not support tasks, or a tool that forbids them).
   */
  callTool(
    name: string,
    args: ToolArguments,
    options: TaskCallOptions,
  ): Promise<CallToolResult | CreateTaskResult>;
  /**
   * Calls one tool, once. A failure is reported, never retried: after a timeout or a lost
   * connection the error's `effect` is `unknown`, since the tool may have run. `structuredContent`
   * is checked against the tool's `outputSchema` (a mismatch: `protocol`/`output_schema_mismatch`,
   * effect `done`). A tool that requires running as a task is run as one, to its end.
   */
  callTool(name: string, args?: ToolArguments, options?: CallOptions): Promise<CallToolResult>;
  /**
   * Runs a tool as a task and waits for its result: polls at the server's interval (or sooner
   * when it announces a change), all within one budget. On timeout or cancellation the task is
   * cancelled on the server (`tasks/cancel`) before the call settles.
   */
  callToolAsTask(name: string, args?: ToolArguments, options?: TaskRunOptions): Promise<CallToolResult>;

  /** Every resource, every page, under the call phase's budgets and the page ceiling. */
  listResources(options?: OperationOptions): Promise<Resource[]>;
  /** One page of resources. */
  listResourcesPage(cursor?: string, options?: OperationOptions): Promise<Page<Resource>>;
  /** Every resource template, every page. */
  listResourceTemplates(options?: OperationOptions): Promise<ResourceTemplate[]>;
  /** One page of resource templates. */
  listResourceTemplatesPage(cursor?: string, options?: OperationOptions): Promise<Page<ResourceTemplate>>;
  /** A resource's contents (`resources/read`). */
  readResource(uri: string, options?: OperationOptions): Promise<ReadResourceResult>;
  /**
   * Asks for `notifications/resources/updated` about `uri` (see onResourceUpdated). Up to
   * 2025-11-25 it is `resources/subscribe`. In 2026-07-28 the URI joins the client's one
   * `subscriptions/listen` stream (opened, or replaced by a wider one), and this resolves once the
   * server acknowledged it; a server that leaves the URI out of its acknowledgement fails it with
   * `remote_error` / `subscription_refused`.
   */
  subscribeResource(uri: string, options?: OperationOptions): Promise<void>;
  /** Stops the updates subscribeResource asked for (in 2026-07-28, the listen stream closes when nothing is left on it). */
  unsubscribeResource(uri: string, options?: OperationOptions): Promise<void>;

  /**
   * Every skill the server lists (SEP-2640 `skills/list`), every page, under the call phase's
   * budgets and the page ceiling. Entries only: no file is read. A server that does not declare
   * the skills extension: `protocol` / `skills_not_offered`, nothing sent.
   */
  listSkills(options?: OperationOptions): Promise<Skill[]>;
  /** One page of skills. */
  listSkillsPage(cursor?: string, options?: OperationOptions): Promise<Page<Skill>>;
  /** The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`), listed or not. */
  getSkill(uri: string, options?: OperationOptions): Promise<Skill>;
  /**
   * Reads a skill's files (by its name, which must name one listed skill, or the URI of its
   * `SKILL.md`) and resolves only once every one matched its entry: size, digest, and the
   * front matter of `SKILL.md`. Paths are confined to the skill's folder and the total to 16 MiB
   * before the first read. A mismatch: `protocol` / `skill_digest_mismatch`,
   * `skill_size_mismatch`, `skill_frontmatter_mismatch`; an entry that cannot be trusted:
   * `skill_path_refused`, `skill_unverifiable` (dynamic); too large: `limit` / `skill_too_large`.
   */
  loadSkill(nameOrUri: string, options?: LoadSkillOptions): Promise<LoadedSkill>;

  /** Every prompt, every page. */
  listPrompts(options?: OperationOptions): Promise<Prompt[]>;
  /** One page of prompts. */
  listPromptsPage(cursor?: string, options?: OperationOptions): Promise<Page<Prompt>>;
  /** A prompt's messages for these arguments (`prompts/get`). */
  getPrompt(
    name: string,
    args?: Record<string, string>,
    options?: OperationOptions,
  ): Promise<GetPromptResult>;

  /** Suggestions for a prompt argument or a resource template variable (`completion/complete`). */
  complete(
    ref: CompletionRef,
    argument: CompletionArgument,
    context?: CompletionContext,
    options?: OperationOptions,
  ): Promise<CompleteResult>;

  /**
   * The least severe log level the server should send. Until 2025-11-25 it is `logging/setLevel`;
   * in 2026-07-28 it travels in every later request's `_meta`, so this sends nothing.
   */
  setLoggingLevel(level: LoggingLevel, options?: OperationOptions): Promise<void>;

  /** A task's current state (`tasks/get`). */
  getTask(taskId: string, options?: OperationOptions): Promise<Task>;
  /** A task's result, waiting for it to end within the call budget. */
  getTaskResult(taskId: string, options?: OperationOptions): Promise<CallToolResult>;
  /** Every task the server lists (`tasks/list`; 2025-11-25 only). */
  listTasks(options?: OperationOptions): Promise<Task[]>;
  /** One page of tasks (2025-11-25 only). */
  listTasksPage(cursor?: string, options?: OperationOptions): Promise<Page<Task>>;
  /** Asks the server to cancel a task; its new state, when the server reports one. */
  cancelTask(taskId: string, options?: OperationOptions): Promise<Task | undefined>;

  /**
   * Any other request (`skills/list`, say), through the same path: the JSON result as received.
   * `onProgress` and `resetTimeoutOnProgress` work as for a call; a `tools/call` carries the same
   * `Mcp-Param-*` headers as callTool (from the last listing).
   */
  request(method: string, params?: JsonObject, options?: CallOptions): Promise<JsonObject>;
  /** Sends a notification to the server; resolves once the transport accepted it. */
  notify(method: string, params?: JsonObject, options?: OperationOptions): Promise<void>;

  /**
   * Calls `handler` for each server notification of `method` (`*`: every method). Returns the
   * unsubscribe function. Handlers run detached from the session: one that throws or never
   * settles cannot break or stall it. In 2026-07-28 a handler for `notifications/<kind>/list_changed`
   * also asks the server for those changes on the client's listen stream, if the server announces
   * them (`*` asks for nothing).
   */
  onNotification(method: string, handler: NotificationHandler): () => void;
  /** `notifications/message`, typed; set the level with setLoggingLevel. */
  onLogMessage(handler: (message: LoggingMessage) => void | Promise<void>): () => void;
  /**
   * `notifications/<kind>/list_changed`. The client's own tool cache is already dropped when it
   * runs. In 2026-07-28 it opens (or widens) the listen stream to ask for these changes.
   */
  onListChanged(kind: ListKind, handler: () => void | Promise<void>): () => void;
  /** `notifications/resources/updated` for a subscribed resource. */
  onResourceUpdated(handler: (update: ResourceUpdate) => void | Promise<void>): () => void;
  /** Task status notifications (either era's), as Task. */
  onTaskStatus(handler: (task: Task) => void | Promise<void>): () => void;

  /**
   * The value with every secret this connection holds replaced by `[redacted]`: the configured
   * ones (header values, URL credentials, `env` values, `secrets`) and the OAuth tokens and keys
   * met since, in the forms a server echoes them in (as is, URL-encoded, JSON-escaped, base64).
   * Strings anywhere in it are searched, keys included; nothing else changes, and a value with
   * nothing to redact is returned as it is. For showing what the server returned to someone who
   * must not see the credentials (a log, an LLM host, a web page).
   */
  redact<T>(value: T): T;

  /** Closes the session and releases everything it owns. Idempotent; never rejects. */
  close(): Promise<void>;
}
