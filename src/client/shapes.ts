/**
 * Cheap checks of result shapes, only as deep as the client relies on them: a list's items must
 * carry their key fields, a result the client reads must have the array it reads. Each check
 * returns the typed value, or undefined when the server's result is malformed (the client then
 * fails with `protocol`/`malformed_result`). Nothing here throws, and nothing looks at a value
 * deeper than the field it needs, so a hostile result costs no more than its own size.
 */
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type {
  CallToolResult,
  CompleteResult,
  CreateTaskResult,
  GetPromptResult,
  LoggingLevel,
  LoggingMessage,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Task,
  TaskStatus,
} from "./results.ts";
import { LOGGING_LEVELS } from "./results.ts";

/** Longest task id the client keeps. Servers mint UUIDs (36 characters); this is far above that. */
export const MAX_TASK_ID_CHARS = 1_024;

/** Most completion values a server may return, as the spec sets it. */
export const MAX_COMPLETION_VALUES = 100;

const TASK_STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);

/** Statuses after which a task never changes. */
export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

function optional<T>(v: unknown, check: (x: unknown) => x is T): boolean {
  return v === undefined || check(v);
}

function isDuration(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0;
}

export function isLoggingLevel(v: unknown): v is LoggingLevel {
  return typeof v === "string" && (LOGGING_LEVELS as readonly string[]).includes(v);
}

/** A listed resource: it needs a URI and a name. */
export function admitResource(raw: JsonObject): Resource | undefined {
  return isString(raw.uri) && isString(raw.name) ? (raw as Resource) : undefined;
}

/** A listed resource template: it needs a URI template and a name. */
export function admitTemplate(raw: JsonObject): ResourceTemplate | undefined {
  return isString(raw.uriTemplate) && isString(raw.name) ? (raw as ResourceTemplate) : undefined;
}

/** A listed prompt: it needs a name; arguments, when given, are an array. */
export function admitPrompt(raw: JsonObject): Prompt | undefined {
  return isString(raw.name) && optional(raw.arguments, Array.isArray) ? (raw as Prompt) : undefined;
}

export function callToolResult(raw: JsonObject): CallToolResult | undefined {
  if (!Array.isArray(raw.content)) return undefined;
  return raw as CallToolResult;
}

export function readResourceResult(raw: JsonObject): ReadResourceResult | undefined {
  if (!Array.isArray(raw.contents) || !raw.contents.every(isObject)) return undefined;
  return raw as ReadResourceResult;
}

export function getPromptResult(raw: JsonObject): GetPromptResult | undefined {
  if (!Array.isArray(raw.messages) || !raw.messages.every(isObject)) return undefined;
  return raw as GetPromptResult;
}

export function completeResult(raw: JsonObject): CompleteResult | undefined {
  const c = raw.completion;
  if (!isObject(c) || !Array.isArray(c.values)) return undefined;
  if (c.values.length > MAX_COMPLETION_VALUES || !c.values.every(isString)) return undefined;
  if (!optional(c.total, isDuration) || !optional(c.hasMore, (v): v is boolean => typeof v === "boolean"))
    return undefined;
  return raw as CompleteResult;
}

/**
 * A task in either era's spelling (2025-11-25: `ttl`, `pollInterval`; the 2026-07-28 extension:
 * `ttlMs`, `pollIntervalMs`), as one shape. Unknown statuses are malformed: the set is closed.
 */
export function parseTask(raw: unknown): Task | undefined {
  if (!isObject(raw)) return undefined;
  const { taskId, status } = raw;
  if (!isString(taskId) || taskId === "" || taskId.length > MAX_TASK_ID_CHARS) return undefined;
  if (!isString(status) || !TASK_STATUSES.has(status)) return undefined;
  const ttl = raw.ttlMs !== undefined ? raw.ttlMs : raw.ttl;
  const poll = raw.pollIntervalMs !== undefined ? raw.pollIntervalMs : raw.pollInterval;
  if (!optional(raw.statusMessage, isString) || !optional(raw.createdAt, isString)) return undefined;
  if (!optional(raw.lastUpdatedAt, isString)) return undefined;
  if (ttl !== undefined && ttl !== null && !isDuration(ttl)) return undefined;
  if (!optional(poll, isDuration)) return undefined;
  const task: Task = { taskId, status: status as TaskStatus };
  if (raw.statusMessage !== undefined) task.statusMessage = raw.statusMessage as string;
  if (raw.createdAt !== undefined) task.createdAt = raw.createdAt as string;
  if (raw.lastUpdatedAt !== undefined) task.lastUpdatedAt = raw.lastUpdatedAt as string;
  if (ttl !== undefined) task.ttlMs = ttl as number | null;
  if (poll !== undefined) task.pollIntervalMs = poll as number;
  return task;
}

/**
 * A task-augmented call's reply: a CreateTaskResult (`{ task }` in 2025-11-25; the task's fields
 * inline with `resultType: "task"` in 2026-07-28), `"result"` when the server answered with an
 * ordinary result instead, or undefined when it claims a task but the task is malformed.
 */
export function createTaskResult(raw: JsonObject, modern: boolean): CreateTaskResult | "result" | undefined {
  const claimed = modern ? raw.resultType === "task" : raw.task !== undefined;
  if (!claimed) return "result";
  const task = parseTask(modern ? raw : raw.task);
  if (!task) return undefined;
  const out: CreateTaskResult = { task };
  if (isObject(raw._meta)) out._meta = raw._meta;
  return out;
}

/** A `notifications/message`'s params as a log message, or undefined when they are not one. */
export function loggingMessage(params: JsonObject): LoggingMessage | undefined {
  if (!isLoggingLevel(params.level) || !optional(params.logger, isString)) return undefined;
  const message: LoggingMessage = { level: params.level, data: (params.data ?? null) as JsonValue };
  if (params.logger !== undefined) message.logger = params.logger as string;
  return message;
}
