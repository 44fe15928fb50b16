import type { Era } from "../errors/codes.ts";
import { configError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { CallOptions, OperationOptions, TaskCallOptions, TaskRunOptions, ToolArguments } from "./api.ts";
import { type ListBounds, type ListSpec, listAll, listPage, TASKS } from "./listing.ts";
import { refuseIfModern, ttlOf } from "./operation-checks.ts";
import { CALL_ROUTE, type RequestPath, type Route } from "./request-path.ts";
import { malformedResult } from "./result-errors.ts";
import type { CallToolResult, CreateTaskResult, Page, Task, Tool } from "./results.ts";
import { createTaskResult, isTerminal, parseTask } from "./shapes.ts";
import type { Tasks } from "./tasks.ts";
import type { ToolCatalog } from "./tool-catalog.ts";

/**
 * The arguments as they travel: every transport writes a message with `JSON.stringify`, which
 * leaves out the members whose value is `undefined`, the one way ToolArguments is wider than JSON.
 */
const sent = (args: ToolArguments): JsonObject => args as JsonObject;

/** What tool calls need of the client. */
export interface ToolCallContext {
  era: Era;
  protocolVersion: string;
  path: RequestPath;
  listBounds: ListBounds;
  redactor: Redactor;
  tools: ToolCatalog;
  tasks: Tasks;
}

/**
 * Tools and the tasks they run as: listing (which feeds the tool catalog: output schemas,
 * header parameters, task support), calling once (plain, task-augmented, or run as a task to its
 * end within one budget), and the task operations on task ids. Every request goes through the
 * request path; results are checked against the tool's output schema by the catalog.
 */
export class ToolCalls {
  readonly #c: ToolCallContext;

  constructor(context: ToolCallContext) {
    this.#c = context;
  }

  async listTools(options: OperationOptions): Promise<Tool[]> {
    const { tools } = this.#c;
    const known = new Map<string, Tool>();
    const listed = await listAll(
      this.#c.path,
      {
        ...this.#toolsSpec(),
        admit: (raw) => {
          const tool = tools.admit(raw);
          if (tool) known.set(tool.name, tool);
          return tool;
        },
      },
      this.#c.listBounds,
      options,
    );
    tools.listed(listed, known);
    return listed;
  }

  async listToolsPage(cursor: string | undefined, options: OperationOptions): Promise<Page<Tool>> {
    const page = await listPage(this.#c.path, this.#toolsSpec(), cursor, this.#c.redactor, options);
    this.#c.tools.paged(page.items);
    return page;
  }

  async callTool(
    name: string,
    args: ToolArguments,
    options: CallOptions & { task?: TaskCallOptions["task"] },
  ): Promise<CallToolResult | CreateTaskResult> {
    const { path, tools, tasks, redactor } = this.#c;
    const tool = tools.get(name);
    const modern = this.#c.era === "modern";
    if (options.task === undefined) {
      // A tool that must run as a task is run as one, to its end, so the caller gets its result.
      if (tool?.execution?.taskSupport === "required" && tasks.offered(tool))
        return await this.callToolAsTask(name, args, options);
      const raw = await path.operation(
        "tools/call",
        { name, arguments: sent(args) },
        this.#callRoute(name),
        options,
      );
      return await this.toolResult(name, raw, options.signal);
    }
    if (typeof options.task !== "object" || options.task === null)
      throw configError("invalid_option", "task must be an object");
    const ttlMs = ttlOf(options.task.ttlMs);
    const asTask = tasks.offered(tool);
    const params: JsonObject = { name, arguments: sent(args) };
    if (asTask && !modern) params.task = ttlMs === undefined ? {} : { ttl: ttlMs };
    const raw = await path.operation(
      "tools/call",
      params,
      { ...this.#callRoute(name), task: asTask },
      options,
    );
    if (asTask) {
      const created = createTaskResult(raw, modern);
      if (created === undefined) throw malformedResult(redactor, "the server's task was malformed");
      if (created !== "result") {
        tasks.remember(created.task.taskId, name);
        return created;
      }
    }
    return await this.toolResult(name, raw, options.signal);
  }

  async callToolAsTask(name: string, args: ToolArguments, options: TaskRunOptions): Promise<CallToolResult> {
    const { tasks } = this.#c;
    const ttlMs = ttlOf(options.ttlMs);
    const bounds = this.#c.path.bounds("call", options);
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
      return await tasks.await(task, name, budget, options.onStatus, (t) => {
        task = t;
      });
    } catch (error) {
      if (task && !isTerminal(task.status)) await tasks.abandon(task.taskId);
      throw tasks.outcome(error, bounds.clock, task ? "unknown" : undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  async getTask(taskId: string, options: OperationOptions): Promise<Task> {
    const raw = await this.#c.path.operation("tasks/get", { taskId }, CALL_ROUTE, options);
    return parseTask(raw) ?? this.#malformed("the tasks/get result was not a task");
  }

  async getTaskResult(taskId: string, options: OperationOptions): Promise<CallToolResult> {
    const { path, tasks } = this.#c;
    const name = tasks.toolOf(taskId);
    if (this.#c.era === "legacy") {
      const raw = await path.operation("tasks/result", { taskId }, CALL_ROUTE, options);
      return await this.toolResult(name, raw, options.signal);
    }
    // 2026-07-28 has no tasks/result: the result arrives with the task once it has ended.
    const bounds = path.bounds("call", options);
    const budget = {
      signal: bounds.clock.signal,
      timeoutMs: bounds.clock.maxMs,
      maxResponseBytes: bounds.maxBytes,
    };
    try {
      const task = await this.getTask(taskId, budget);
      return await tasks.await(task, name, budget, undefined, () => {});
    } catch (error) {
      throw tasks.outcome(error, bounds.clock, undefined);
    } finally {
      bounds.clock.dispose();
    }
  }

  async listTasks(options: OperationOptions): Promise<Task[]> {
    refuseIfModern(this.#c, "tasks/list", this.#c.redactor);
    return listAll(this.#c.path, TASKS, this.#c.listBounds, options);
  }

  async listTasksPage(cursor: string | undefined, options: OperationOptions): Promise<Page<Task>> {
    refuseIfModern(this.#c, "tasks/list", this.#c.redactor);
    return listPage(this.#c.path, TASKS, cursor, this.#c.redactor, options);
  }

  async cancelTask(taskId: string, options: OperationOptions): Promise<Task | undefined> {
    const raw = await this.#c.path.operation("tasks/cancel", { taskId }, CALL_ROUTE, options);
    // 2026-07-28 acknowledges with an empty result; 2025-11-25 answers with the task.
    if (this.#c.era === "modern") return undefined;
    return parseTask(raw) ?? this.#malformed("the tasks/cancel result was not a task");
  }

  /** A tool's result, its shape and output schema checked (listing the tools once if needed). */
  toolResult(
    name: string | undefined,
    raw: JsonObject,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    return this.#c.tools.toolResult(name, raw, signal, (s) => this.listTools({ signal: s }));
  }

  #toolsSpec(): ListSpec<Tool> {
    return {
      method: "tools/list",
      key: "tools",
      stage: "list_tools",
      phase: "discovery",
      admit: (raw) => this.#c.tools.admit(raw),
    };
  }

  #callRoute(name: string): Route {
    return {
      stage: "call",
      phase: "call",
      effect: "unknown",
      headerParams: this.#c.tools.headerParams(name),
    };
  }

  #malformed(message: string): never {
    throw malformedResult(this.#c.redactor, message);
  }
}
