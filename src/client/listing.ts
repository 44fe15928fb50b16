import type { Phase, Stage } from "../errors/codes.ts";
import { configError, limitError, protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { MAX_CURSOR_CHARS } from "../options/limits.ts";
import type { OperationOptions } from "./api.ts";
import { CursorTrail } from "./cursor-trail.ts";
import type { Bounds, RequestPath } from "./request-path.ts";
import type { Page, Prompt, Resource, ResourceTemplate, Task } from "./results.ts";
import { admitPrompt, admitResource, admitTemplate, isObject, parseTask } from "./shapes.ts";

/** One paginated list: its method, the result key holding its items, and how an item is admitted. */
export interface ListSpec<T> {
  method: string;
  key: string;
  stage: Stage;
  phase: Phase;
  /** The item as the client keeps it, or undefined to leave it out. */
  admit: (raw: JsonObject) => T | undefined;
}

/** The lists of the call phase; tools/list (discovery phase) feeds the tool catalog (tool-calls.ts). */
export const RESOURCES: ListSpec<Resource> = {
  method: "resources/list",
  key: "resources",
  stage: "call",
  phase: "call",
  admit: admitResource,
};
export const TEMPLATES: ListSpec<ResourceTemplate> = {
  method: "resources/templates/list",
  key: "resourceTemplates",
  stage: "call",
  phase: "call",
  admit: admitTemplate,
};
export const PROMPTS: ListSpec<Prompt> = {
  method: "prompts/list",
  key: "prompts",
  stage: "call",
  phase: "call",
  admit: admitPrompt,
};
export const TASKS: ListSpec<Task> = {
  method: "tasks/list",
  key: "tasks",
  stage: "call",
  phase: "call",
  admit: (raw) => parseTask(raw),
};

/** The bounds on what a listing follows (S8). */
export interface ListBounds {
  maxListPages: number;
  maxTools: number;
  redactor: Redactor;
}

/**
 * Every page of a list, within one operation's budget: at most `maxListPages` pages (and
 * `maxTools` tools), each cursor bounded in length and never followed twice.
 */
export function listAll<T>(
  path: RequestPath,
  spec: ListSpec<T>,
  bounds: ListBounds,
  options: OperationOptions,
): Promise<T[]> {
  const { method, stage, phase } = spec;
  return path.bounded({ stage, phase, effect: "none" }, options, async (b) => {
    const where = { stage, phase, redactor: bounds.redactor };
    const out: T[] = [];
    let cursor: string | undefined;
    const trail = new CursorTrail(MAX_CURSOR_CHARS);
    for (let page = 1; ; page++) {
      if (page > bounds.maxListPages) {
        throw limitError(
          where,
          "too_many_pages",
          `the list went past ${bounds.maxListPages} pages`,
          undefined,
          {
            maxListPages: bounds.maxListPages,
          },
        );
      }
      const read = await readPage(path, spec, cursor, b, bounds.redactor);
      out.push(...read.items);
      if (method === "tools/list" && out.length > bounds.maxTools) {
        throw limitError(
          where,
          "too_many_tools",
          `the server listed more than ${bounds.maxTools} tools`,
          undefined,
          {
            maxTools: bounds.maxTools,
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

/** One page, from the caller's cursor (checked like a server's: S8). */
export function listPage<T>(
  path: RequestPath,
  spec: ListSpec<T>,
  cursor: string | undefined,
  redactor: Redactor,
  options: OperationOptions,
): Promise<Page<T>> {
  if (cursor !== undefined && (typeof cursor !== "string" || cursor.length > MAX_CURSOR_CHARS))
    throw configError("invalid_option", `cursor must be a string of at most ${MAX_CURSOR_CHARS} characters`);
  return path.bounded({ stage: spec.stage, phase: spec.phase, effect: "none" }, options, (b) =>
    readPage(path, spec, cursor === "" ? undefined : cursor, b, redactor),
  );
}

/** One page: its items admitted, and its cursor if it has a next one (bounded in length, S8). */
async function readPage<T>(
  path: RequestPath,
  spec: ListSpec<T>,
  cursor: string | undefined,
  bounds: Bounds,
  redactor: Redactor,
): Promise<Page<T>> {
  const { method, key, stage, phase } = spec;
  const where = { stage, phase, redactor };
  const reply = await path.send(method, cursor ? { cursor } : undefined, bounds);
  const raw = reply.result[key];
  if (!Array.isArray(raw))
    throw protocolError(where, "malformed_result", `the ${method} result had no ${key} array`);
  const items: T[] = [];
  for (const item of raw) {
    if (!isObject(item)) continue;
    const admitted = spec.admit(item);
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
