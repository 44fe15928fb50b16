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
  OperationOptions,
  TaskCallOptions,
  TaskRunOptions,
} from "../client/api.ts";
import type { Task, Tool } from "../client/results.ts";
import { loadSkill } from "../client/skills.ts";
import type { Era, TransportMode } from "../errors/codes.ts";
import { interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { LIMITS } from "../options/limits.ts";
import { declaredExtensions } from "../protocol/extensions.ts";
import type { ProtocolVersion } from "../protocol/versions.ts";
import { CLEANUP_GRACE_MS } from "../transport/grace.ts";
import { type Frame, replyFrameCeiling } from "./frames.ts";
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

/** A Client on a named session, with what the session said of itself when the command attached. */
export type RemoteClient = Client & { readonly info: SessionInfo };

/**
 * The client on a session: facts from the session's info; each operation forwarded as it is
 * (its parameters and result typed by the `Client` interface it is written against).
 */
function remoteClient(link: SessionLink, info: SessionInfo, budgets: CommandBudgets): RemoteClient {
  let ended = false;
  let cachedTools: Tool[] | undefined;

  /** Runs one operation in the session. */
  const op = <T>(method: Operation, args: unknown[], options: Options = {}): Promise<T> => {
    const discovery = DISCOVERY_OPERATIONS.has(method);
    const timeoutMs = options.timeoutMs ?? (discovery ? budgets.discoveryTimeoutMs : budgets.callTimeoutMs);
    const maxResponseBytes =
      options.maxResponseBytes ?? (discovery ? budgets.discoveryMaxBytes : budgets.callMaxBytes);
    // The reply may be as large as the call's ceiling (the session's own when the command names none).
    link.allowFrames(replyFrameCeiling(maxResponseBytes ?? info.callMaxBytes ?? 0));
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
    const name = info.name;
    const sent = method === "callTool" || method === "callToolAsTask" || method === "request";
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(cancelled(signal.reason));
      let guard: NodeJS.Timeout | undefined;
      const finish = (fn: () => void) => {
        link.release(id);
        signal?.removeEventListener("abort", onAbort);
        if (guard) clearTimeout(guard);
        fn();
      };
      const id = link.request(
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
      const budget = options.maxTotalTimeoutMs ?? timeoutMs ?? info.callTimeoutMs;
      guard = setTimeout(
        () => finish(() => reject(stuck(budget))),
        (options.resetTimeoutOnProgress && !options.maxTotalTimeoutMs ? 10 : 1) * budget + LOCAL_GRACE_MS,
      );
      guard.unref();
      // The cancel goes to the daemon, whose client tells the server; its answer (cancelled)
      // settles the operation, or the local grace does.
      const onAbort = () => {
        link.tell({ op: "cancel", target: id });
        if (guard) clearTimeout(guard);
        guard = setTimeout(() => finish(() => reject(cancelled(signal?.reason))), LOCAL_GRACE_MS);
        guard.unref();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  };

  /** Subscribes to one notification stream of the session; the daemon forwards each as it arrives. */
  const listen = (
    kind: ListenKind,
    handler: (payload: never) => void | Promise<void>,
    method?: string,
  ): (() => void) => {
    let stopped = false;
    const id = link.request({ op: "listen", session: info.name, kind, method }, (f) => {
      if ("notification" in f && !stopped)
        // Handlers run detached: one that throws or never settles cannot stall the link.
        queueMicrotask(() => {
          void Promise.resolve()
            .then(() => handler(f.notification as never))
            .catch(() => {});
        });
      else if ("error" in f || f.closed === true) ended = true;
    });
    return () => {
      if (stopped) return;
      stopped = true;
      link.tell({ op: "unlisten", target: id });
      link.release(id);
    };
  };

  return {
    info,
    protocolVersion: info.protocolVersion as ProtocolVersion,
    era: info.era as Era,
    transportMode: info.transportMode as TransportMode,
    serverInfo: info.serverInfo,
    serverCapabilities: info.serverCapabilities as JsonObject,
    serverExtensions: declaredExtensions(info.serverCapabilities as JsonObject),
    instructions: info.instructions,
    stages: [],
    eraHint: "none",
    attempts: info.attempts,
    get state() {
      return ended || link.closed ? "closed" : "open";
    },
    get cachedTools() {
      return cachedTools;
    },

    ping: (options) => op("ping", [], options),
    listTools: async (options) => {
      const tools = await op<Tool[]>("listTools", [], options);
      cachedTools = tools;
      return tools;
    },
    listToolsPage: (cursor, options) => op("listToolsPage", [cursor], options),
    callTool: (name, args, options) => op("callTool", [name, args ?? {}], options),
    callToolAsTask: (name, args, options) => op("callToolAsTask", [name, args ?? {}], options),
    listResources: (options) => op("listResources", [], options),
    listResourcesPage: (cursor, options) => op("listResourcesPage", [cursor], options),
    listResourceTemplates: (options) => op("listResourceTemplates", [], options),
    listResourceTemplatesPage: (cursor, options) => op("listResourceTemplatesPage", [cursor], options),
    readResource: (uri, options) => op("readResource", [uri], options),
    subscribeResource: (uri, options) => op("subscribeResource", [uri], options),
    unsubscribeResource: (uri, options) => op("unsubscribeResource", [uri], options),
    listSkills: (options) => op("listSkills", [], options),
    listSkillsPage: (cursor, options) => op("listSkillsPage", [cursor], options),
    getSkill: (uri, options) => op("getSkill", [uri], options),
    // Loading reads through the session, file by file, and is verified here, on this side.
    loadSkill(nameOrUri, options) {
      return loadSkill(this, nameOrUri, options);
    },
    listPrompts: (options) => op("listPrompts", [], options),
    listPromptsPage: (cursor, options) => op("listPromptsPage", [cursor], options),
    getPrompt: (name, args, options) => op("getPrompt", [name, args], options),
    complete: (ref, argument, context, options) => op("complete", [ref, argument, context], options),
    setLoggingLevel: (level, options) => op("setLoggingLevel", [level], options),
    getTask: (taskId, options) => op("getTask", [taskId], options),
    getTaskResult: (taskId, options) => op("getTaskResult", [taskId], options),
    listTasks: (options) => op("listTasks", [], options),
    listTasksPage: (cursor, options) => op("listTasksPage", [cursor], options),
    cancelTask: async (taskId, options) =>
      (await op<Task | null>("cancelTask", [taskId], options)) ?? undefined,
    request: (method, params, options) => op("request", [method, params], options),
    notify: async (method, params, options) => {
      await op("notify", [method, params], options);
    },

    onNotification: (method, handler) => listen("notification", handler, method),
    onLogMessage: (handler) => listen("log", handler),
    onListChanged: (kind, handler) => listen(`list_changed_${kind}`, handler),
    onResourceUpdated: (handler) => listen("resource_updated", handler),
    onTaskStatus: (handler) => listen("task_status", handler),

    /** The session process already redacted what it sent, with secrets a command never holds. */
    redact: (value) => value,

    /** Ends this command's link; the session itself stays up. */
    close: async () => {
      ended = true;
      link.close();
    },
  };
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
  return remoteClient(link, answer.ok as unknown as SessionInfo, budgets);
}
