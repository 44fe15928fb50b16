/**
 * What every framework adapter shares: which of a server's tools it offers and under what names,
 * the budgets its calls run under, and how a tether failure reaches the framework (a
 * `TetherToolError` carrying the public code and our own words, never the server's).
 */

import type { CallOptions } from "../client/api.ts";
import type { Tool } from "../client/results.ts";
import type { ErrorCode } from "../errors/codes.ts";
import { configError } from "../errors/failures.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";

/** Which of a server's tools an adapter offers, and the names the model knows them by. */
export interface ToolSelection {
  /** Only these tools (the server's names). */
  include?: readonly string[];
  /** Never these tools (the server's names). */
  exclude?: readonly string[];
  /** Offers a tool only when this returns true (after include and exclude). */
  filter?: (tool: Tool) => boolean;
  /** Another name for a tool: by the server's name, or a function of the tool. The prefix goes in front of it. */
  rename?: Readonly<Record<string, string>> | ((tool: Tool) => string);
  /** Put in front of every name, so several servers can share one agent (`github_`, say). */
  prefix?: string;
}

/** The budgets every tool call runs under: the call options without a signal (the framework's goes in). */
export type CallBudgets = Omit<CallOptions, "signal">;

/**
 * The tools a selection offers, each under the name the model will know it by. Two tools that
 * would end up under one name are a `config` error naming it: the model could not tell them apart.
 */
export function selectTools(tools: readonly Tool[], selection: ToolSelection = {}): Map<string, Tool> {
  const include = selection.include === undefined ? undefined : new Set(selection.include);
  const exclude = new Set(selection.exclude ?? []);
  const chosen = new Map<string, Tool>();
  for (const tool of tools) {
    if (include !== undefined && !include.has(tool.name)) continue;
    if (exclude.has(tool.name) || (selection.filter && !selection.filter(tool))) continue;
    const { rename } = selection;
    const base = typeof rename === "function" ? rename(tool) : (rename?.[tool.name] ?? tool.name);
    const name = `${selection.prefix ?? ""}${base}`;
    const other = chosen.get(name);
    if (other)
      throw configError(
        "tool_name_clash",
        `the tools ${JSON.stringify(other.name)} and ${JSON.stringify(tool.name)} would both be offered as ${JSON.stringify(name)}; rename or prefix one`,
      );
    chosen.set(name, tool);
  }
  return chosen;
}

/**
 * A tool call that tether could not complete (a timeout, a limit, a lost connection, a refusal,
 * a cancellation), as the framework's tool error. It carries the public `code` and a message in
 * tether's own words: never the server's error text, a body, a URL or a secret, and no `cause`
 * (the TetherError behind it keeps those, in process). The tool's own failure (`isError: true`)
 * is not one of these: it is a result, handed to the model as such.
 */
export class TetherToolError extends Error {
  override readonly name = "TetherToolError";
  /** The TetherError's code: `timeout`, `limit`, `connection`, `cancelled`, `remote_error`, ... */
  readonly code: ErrorCode;
  /** The tool's name as the model knows it. */
  readonly tool: string;

  constructor(tool: string, error: TetherError) {
    const { text } = error.toToolResult().content[0];
    super(`the tool ${tool} failed: ${text}`);
    this.code = error.code;
    this.tool = tool;
  }

  /** What a log or a host may show: the code and the message. */
  toJSON(): { name: string; code: ErrorCode; tool: string; message: string } {
    return { name: this.name, code: this.code, tool: this.tool, message: this.message };
  }
}

/**
 * Whatever a call threw, as the tool error a framework hands on. A call the framework itself
 * cancelled (its signal aborted) ends with the framework's own abort reason, which is how each
 * framework knows its run was stopped rather than a tool failing.
 */
export function toolFailure(tool: string, error: unknown, signal?: AbortSignal): unknown {
  const tether = TetherError.is(error) ? error : asTetherError(error, { stage: "call", phase: "call" });
  if (tether.code === "cancelled" && signal?.aborted) return signal.reason;
  return new TetherToolError(tool, tether);
}
