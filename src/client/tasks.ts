import type { CallEffect, Era } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { forCall, toPublicError } from "../errors/to-public.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { CallClock } from "../lifecycle/call-clock.ts";
import type { Clock } from "../lifecycle/clock.ts";
import type { OperationOptions } from "./api.ts";
import { CALL_ROUTE, type RequestPath } from "./request-path.ts";
import { malformedResult } from "./result-errors.ts";
import type { CallToolResult, Task, Tool } from "./results.ts";
import { isObject, parseTask } from "./shapes.ts";
import { pollDelayMs, pollPause, TASK_CANCEL_GRACE_MS } from "./task-poll.ts";

/** Task ids this client created, kept to check their results against their tool's schema. */
const MAX_REMEMBERED_TASKS = 256;

/** What task handling needs of the client. */
export interface TaskContext {
  era: Era;
  /** The server's capabilities (2025-11-25 declares task-augmented tool calls there). */
  serverCapabilities: JsonObject;
  session: Session;
  path: RequestPath;
  clock: Clock;
  redactor: Redactor;
  /** A tool's result, its shape and output schema checked. */
  toolResult: (
    name: string | undefined,
    raw: JsonObject,
    signal: AbortSignal | undefined,
  ) => Promise<CallToolResult>;
}

/**
 * Tasks (2025-11-25, and the 2026-07-28 extension): whether a call may ask for one, which tool
 * each task this client created runs, waiting for a task to end (polling at the server's pace,
 * woken early by its status notifications), and cancelling one the caller gave up on.
 */
export class Tasks {
  readonly #c: TaskContext;
  readonly #toolOf = new Map<string, string>();

  constructor(context: TaskContext) {
    this.#c = context;
  }

  /**
   * Whether a call may ask for a task. 2025-11-25: only when the server declared task-augmented
   * tool calls and the tool (if listed) allows them; otherwise the spec forbids asking. 2026-07-28:
   * the request declares the extension and the server decides.
   */
  offered(tool: Tool | undefined): boolean {
    if (this.#c.era === "modern") return true;
    const tasks = this.#c.serverCapabilities.tasks;
    const requests = isObject(tasks) ? tasks.requests : undefined;
    const tools = isObject(requests) ? requests.tools : undefined;
    if (!isObject(tools) || !isObject(tools.call)) return false;
    if (!tool) return true;
    const support = tool.execution?.taskSupport;
    return support === "optional" || support === "required";
  }

  /** Remembers which tool a task runs, the oldest forgotten past MAX_REMEMBERED_TASKS. */
  remember(taskId: string, name: string): void {
    if (this.#toolOf.size >= MAX_REMEMBERED_TASKS) {
      const [oldest] = this.#toolOf.keys();
      if (oldest !== undefined) this.#toolOf.delete(oldest);
    }
    this.#toolOf.set(taskId, name);
  }

  toolOf(taskId: string): string | undefined {
    return this.#toolOf.get(taskId);
  }

  /**
   * Polls a task until it ends and returns its tool result. 2025-11-25: `tasks/result` once it
   * completed or failed (or needs input, which it then asks for on that request's stream).
   * 2026-07-28: the result or error comes with the terminal task; input it asks for is answered
   * by the application's handlers and sent with `tasks/update`, each request key once.
   */
  async await(
    first: Task,
    name: string | undefined,
    budget: OperationOptions,
    onStatus: ((task: Task) => void) | undefined,
    seen: (task: Task) => void,
  ): Promise<CallToolResult> {
    const { path, session } = this.#c;
    const modern = this.#c.era === "modern";
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
          const raw = await path.operation("tasks/result", { taskId: task.taskId }, CALL_ROUTE, budget);
          seen({ ...task, status: "completed" });
          return await this.#c.toolResult(name, raw, signal);
        } catch (error) {
          throw this.#failure(error);
        }
      }
      if (modern && task.status === "completed") {
        const result = isObject(detail.result) ? detail.result : undefined;
        if (!result) throw malformedResult(this.#c.redactor, "the completed task carried no result");
        return await this.#c.toolResult(name, result, signal);
      }
      if (modern && task.status === "failed") throw this.#ended("task_failed", detail.error);
      if (task.status === "cancelled") throw this.#ended("task_cancelled", undefined);
      if (modern && task.status === "input_required" && isObject(detail.inputRequests)) {
        const fresh: JsonObject = {};
        for (const [key, request] of Object.entries(detail.inputRequests)) {
          if (answered.has(key)) continue;
          answered.add(key);
          fresh[key] = request;
        }
        if (Object.keys(fresh).length > 0) {
          const inputResponses = await path.answerInputs(fresh, "call", "call", signal);
          await path.operation("tasks/update", { taskId: task.taskId, inputResponses }, CALL_ROUTE, budget);
        }
      }
      await pollPause(this.#c.clock, pollDelayMs(task), signal, (early) =>
        session.notifications.add((n) => {
          if (
            (n.method === "notifications/tasks/status" || n.method === "notifications/tasks") &&
            n.params?.taskId === task.taskId
          )
            early();
        }),
      );
      const raw = await path.operation("tasks/get", { taskId: task.taskId }, CALL_ROUTE, budget);
      const next = parseTask(raw);
      if (!next || next.taskId !== task.taskId)
        throw malformedResult(this.#c.redactor, "the tasks/get result was not the task");
      task = next;
      detail = raw;
    }
  }

  /**
   * Tells the server an abandoned task is no longer wanted. The call's own budget is spent, so the
   * request has a grace of its own; its outcome changes nothing for the caller.
   */
  async abandon(taskId: string): Promise<void> {
    if (this.#c.session.closure) return;
    try {
      await this.#c.path.operation("tasks/cancel", { taskId }, CALL_ROUTE, {
        timeoutMs: TASK_CANCEL_GRACE_MS,
      });
    } catch {
      // Best effort: the task's TTL ends it on the server anyway.
    }
  }

  /**
   * The error a multi-step operation reports: when its own budget ran out or its caller cancelled,
   * that (with the whole budget as the limit), whatever step it interrupted; otherwise the step's error.
   */
  outcome(error: unknown, clock: CallClock, effect: CallEffect | undefined): TetherError {
    const where = { stage: "call" as const, phase: "call" as const, redactor: this.#c.redactor };
    if (clock.cancellation.aborted) {
      const stepEffect = error instanceof TetherError ? error.effect : undefined;
      return this.#c.path.publicError(
        clock.cancellation.reason,
        "call",
        "call",
        clock,
        effect ?? stepEffect ?? "none",
      );
    }
    const e = toPublicError(error, where);
    return effect && e.effect !== "done" ? forCall(e, { ...where, effect }) : e;
  }

  /** A failed task's `tasks/result` error: the tool ran and failed, so its effect is not `none`. */
  #failure(error: unknown): unknown {
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
      redactor: this.#c.redactor,
    });
  }

  /** A task that ended without a result: failed (with the server's JSON-RPC error) or cancelled. */
  #ended(reason: "task_failed" | "task_cancelled", error: JsonValue | undefined): TetherError {
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
      redactor: this.#c.redactor,
    });
  }
}
