/**
 * What travels on the session socket besides framing: which client operations a command may ask
 * for (and where each takes its options), and how an error crosses as its public record and is
 * made a TetherError again on the other side.
 */
import type { CallEffect, ErrorCode, Phase, Stage } from "../errors/codes.ts";
import { baseRedactor } from "../errors/redact.ts";
import { type ErrorRecord, TetherError } from "../errors/tether-error.ts";
import { requiredUrlElicitations } from "../errors/url-elicitation.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";

/** Forwarded client operations, each with the index of its options argument. */
export const OPERATIONS = {
  ping: 0,
  listTools: 0,
  listToolsPage: 1,
  callTool: 2,
  callToolAsTask: 2,
  listResources: 0,
  listResourcesPage: 1,
  listResourceTemplates: 0,
  listResourceTemplatesPage: 1,
  readResource: 1,
  subscribeResource: 1,
  unsubscribeResource: 1,
  listSkills: 0,
  listSkillsPage: 1,
  getSkill: 1,
  listPrompts: 0,
  listPromptsPage: 1,
  getPrompt: 2,
  complete: 3,
  setLoggingLevel: 1,
  getTask: 1,
  getTaskResult: 1,
  listTasks: 0,
  listTasksPage: 1,
  cancelTask: 1,
  request: 2,
  notify: 2,
} as const;

export type Operation = keyof typeof OPERATIONS;

export function isOperation(name: unknown): name is Operation {
  return typeof name === "string" && Object.hasOwn(OPERATIONS, name);
}

/** Operations that run in the discovery phase (their budget is the discovery one). */
export const DISCOVERY_OPERATIONS: ReadonlySet<Operation> = new Set(["listTools", "listToolsPage"]);

/**
 * The notification streams a command may listen to: any method (`notification`, with `method`),
 * or the client's typed ones.
 */
export type ListenKind =
  | "notification"
  | "log"
  | "list_changed_tools"
  | "list_changed_resources"
  | "list_changed_prompts"
  | "resource_updated"
  | "task_status";

export const LISTEN_KINDS: ReadonlySet<string> = new Set<ListenKind>([
  "notification",
  "log",
  "list_changed_tools",
  "list_changed_resources",
  "list_changed_prompts",
  "resource_updated",
  "task_status",
]);

/** What a session is, as `session list` and `@NAME` see it. */
export interface SessionInfo {
  name: string;
  /** The target as the user gave it, redacted. */
  target: string;
  era: string;
  protocolVersion: string;
  transportMode: string;
  serverInfo?: { name?: string; version?: string };
  serverCapabilities: Record<string, unknown>;
  instructions?: string;
  attempts: number;
  /** Wall-clock ms since the epoch. */
  startedAt: number;
  /** Ms since the session was last used; 0 while a command is using it. */
  idleMs: number;
  idleTimeoutMs: number;
  /** The session's own call-phase budget and ceiling, for a command that names none. */
  callTimeoutMs: number;
  callMaxBytes?: number;
  daemonPid: number;
}

/**
 * An error's public record, for the wire; a -32042's URL elicitations (in process only, never in
 * the record) ride beside it, so a command on `@NAME` can act on them as a one-shot can.
 */
export function errorToWire(error: TetherError): ErrorRecord & { urlElicitations?: JsonObject[] } {
  const record = error.toJSON();
  if (!error.urlElicitations) return record;
  return { ...record, urlElicitations: error.urlElicitations.map((u) => ({ mode: "url", ...u })) };
}

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
  "config",
  "connection",
  "protocol",
  "timeout",
  "limit",
  "unauthorized",
  "forbidden",
  "throttled",
  "upstream",
  "remote_error",
  "internal",
  "cancelled",
]);

/** The error a record stands for; anything malformed becomes an `internal` error of our own. */
export function errorFromWire(value: unknown): TetherError {
  const r = (typeof value === "object" && value !== null ? value : {}) as Partial<ErrorRecord>;
  if (typeof r.code !== "string" || !CODES.has(r.code))
    return new TetherError({
      code: "internal",
      reason: "session_protocol",
      stage: "call",
      phase: "call",
      message: "the session process sent an unreadable error",
    });
  const num = (n: unknown) => (typeof n === "number" && Number.isFinite(n) ? n : undefined);
  const error = new TetherError({
    code: r.code,
    reason: typeof r.reason === "string" ? r.reason.slice(0, 64) : "unknown",
    stage: (typeof r.stage === "string" ? r.stage : "call") as Stage,
    phase: (r.phase === "discovery" ? "discovery" : "call") as Phase,
    message: typeof r.message === "string" ? r.message.slice(0, 2000) : "the session reported a failure",
    limits: r.limits && typeof r.limits === "object" ? r.limits : undefined,
    observedBytes: num(r.observedBytes),
    httpStatus: num(r.httpStatus),
    rpcCode: num(r.rpcCode),
    rpcMessage: typeof r.rpcMessage === "string" ? r.rpcMessage : undefined,
    attempt: num(r.attempt),
    effect: (["none", "unknown", "done"] as const).includes(r.effect as CallEffect)
      ? (r.effect as CallEffect)
      : undefined,
    // Checked again as a server's would be: the session process is another process.
    urlElicitations:
      typeof r.rpcCode !== "number"
        ? undefined
        : requiredUrlElicitations(
            r.rpcCode,
            { elicitations: (value as { urlElicitations?: unknown }).urlElicitations },
            baseRedactor,
          ),
  });
  const attempts = num(r.attempts);
  if (attempts !== undefined) error.attempts = attempts;
  return error;
}

/** A command's session is gone (stopped, idle, its server or the daemon died, or never started). */
export function sessionClosedError(
  name: string,
  why: string,
  effect?: CallEffect,
  cause?: unknown,
): TetherError {
  return new TetherError({
    code: "connection",
    reason: "closed",
    stage: "call",
    phase: "call",
    closure: "eof",
    message: `session ${JSON.stringify(name.slice(0, 64))} ${why}`,
    effect,
    cause,
  });
}

/**
 * The error a request's answer carries, with the progress notifications the command received for
 * it before (the fact the session's client knew; see TetherError.progressSeen).
 */
export function answerError(wire: unknown, progressSeen: number): TetherError {
  const error = errorFromWire(wire);
  error.progressSeen = progressSeen;
  return error;
}

/** A request whose session process went away before answering: it may have run once it was sent. */
export function daemonGone(name: string, sent: boolean): TetherError {
  return sessionClosedError(name, "ended: its session process went away", sent ? "unknown" : "none");
}
