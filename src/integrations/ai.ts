/**
 * `mcp-tether/ai`: a connected client's tools as the AI SDK's `ToolSet`, for `generateText`,
 * `streamText` and agents. Each call goes through the client's request path with the AI SDK's
 * abort signal and the budgets given here; the tool's own failure (`isError: true`) is the result
 * the model sees, and a failure of tether's (a timeout, a limit, a lost connection) is a thrown
 * `TetherToolError` with the public code and tether's words only. `ai` is an optional peer: only
 * this entry imports it.
 */

import { dynamicTool, type JSONSchema7, type JSONValue, jsonSchema, type ToolSet } from "ai";
import type { Client, OperationOptions } from "../client/api.ts";
import type { CallToolResult, ContentBlock, Tool } from "../client/results.ts";
import { configError } from "../errors/failures.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type CallBudgets, selectTools, type ToolSelection, toolFailure } from "./tools.ts";

export type { CallBudgets, ToolSelection } from "./tools.ts";
export { TetherToolError } from "./tools.ts";

/** How a client's tools become an AI SDK tool set. */
export interface AiToolsOptions extends ToolSelection {
  /** The budgets of every call (`timeoutMs`, `maxResponseBytes`, progress...); the AI SDK's abort signal is added to each. */
  call?: CallBudgets;
  /** The listing's signal and budgets, for the first listing and every refresh. */
  list?: OperationOptions;
  /**
   * Follow the server's `notifications/tools/list_changed` (default true): the set is listed again
   * and updated in place, so a running `generateText` offers the new tools from its next step.
   */
  refresh?: boolean;
  /** Told the set after each refresh. */
  onRefresh?: (tools: ToolSet) => void;
  /** Told why a refresh failed; the set stays as it was. */
  onRefreshError?: (error: unknown) => void;
  /** Stops following the server's changes. */
  signal?: AbortSignal;
  /**
   * The set to put the tools in (default: a new one), for several servers in one agent: each
   * call adds its own tools (give each a `prefix`), and a refresh replaces only those.
   */
  into?: ToolSet;
}

type AiTool = ReturnType<typeof dynamicTool>;
type ModelOutput = Awaited<ReturnType<NonNullable<AiTool["toModelOutput"]>>>;
type ModelPart = Extract<ModelOutput, { type: "content" }>["value"][number];

/**
 * The client's tools as an AI SDK `ToolSet`. Lists them now (every page, under the listing's
 * budgets); with `refresh` (the default) the returned object is kept in step with the server
 * until `signal` aborts or the client closes. A name already in `into` that is not this client's
 * is a `config` error (`tool_name_clash`), as are two tools under one name.
 */
export async function aiTools(client: Client, options: AiToolsOptions = {}): Promise<ToolSet> {
  const set: ToolSet = options.into ?? {};
  let mine: ReadonlySet<string> = new Set();
  /** Puts `fresh` in the set in place of this client's tools, keeping the object the caller holds. */
  const replace = (fresh: ToolSet): void => {
    const clash = Object.keys(fresh).find((name) => name in set && !mine.has(name));
    if (clash !== undefined)
      throw configError(
        "tool_name_clash",
        `the tool set already has a tool named ${JSON.stringify(clash)}; prefix one`,
      );
    for (const name of mine) delete set[name];
    Object.assign(set, fresh);
    mine = new Set(Object.keys(fresh));
  };
  replace(build(client, await client.listTools(options.list), options));
  if (options.refresh === false || options.signal?.aborted) return set;
  let running: Promise<void> | undefined;
  let again = false;
  const relist = async (): Promise<void> => {
    do {
      again = false;
      try {
        const fresh = build(client, await client.listTools(options.list), options);
        if (options.signal?.aborted) return;
        replace(fresh);
        options.onRefresh?.(set);
      } catch (error) {
        options.onRefreshError?.(error);
      }
    } while (again && !options.signal?.aborted);
  };
  const stop = client.onListChanged("tools", () => {
    // Changes that arrive while a listing runs are folded into one more listing after it.
    if (running) {
      again = true;
      return running;
    }
    running = relist().finally(() => {
      running = undefined;
    });
    return running;
  });
  options.signal?.addEventListener("abort", stop, { once: true });
  return set;
}

function build(client: Client, tools: readonly Tool[], options: AiToolsOptions): ToolSet {
  const set: ToolSet = {};
  for (const [name, tool] of selectTools(tools, options))
    set[name] = aiTool(client, name, tool, options.call);
  return set;
}

function aiTool(client: Client, name: string, tool: Tool, budgets: CallBudgets | undefined): AiTool {
  const structured = tool.outputSchema !== undefined;
  return dynamicTool({
    description: tool.description ?? tool.title ?? "",
    ...(tool.title === undefined ? {} : { title: tool.title }),
    metadata: { mcpTool: tool.name },
    inputSchema: jsonSchema(objectSchema(tool.inputSchema)),
    ...(tool.outputSchema === undefined
      ? {}
      : { outputSchema: jsonSchema(tool.outputSchema as JSONSchema7) }),
    execute: async (input, { abortSignal }) => {
      let result: CallToolResult;
      try {
        result = await client.callTool(tool.name, argumentsOf(input), { ...budgets, signal: abortSignal });
      } catch (error) {
        throw toolFailure(name, error, abortSignal);
      }
      // A tool with an output schema answers with its structured content (the client checked it).
      return structured && !result.isError ? (result.structuredContent ?? result) : result;
    },
    toModelOutput: ({ output }) => modelOutput(output, structured),
  });
}

/** The input schema as the AI SDK expects one: an object schema, with properties. */
function objectSchema(schema: JsonObject): JSONSchema7 {
  return {
    ...schema,
    type: "object",
    properties: (schema.properties as JSONSchema7["properties"]) ?? {},
  } as JSONSchema7;
}

/** What the model passed; the AI SDK does not check it against the schema, so a non-object is sent as no arguments. */
function argumentsOf(input: unknown): JsonObject {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as JsonObject) : {};
}

function isToolResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null && Array.isArray((value as CallToolResult).content);
}

/** A tool's result as the model reads it: its content blocks, an error text for the tool's own failure. */
function modelOutput(output: unknown, structured: boolean): ModelOutput {
  if (isToolResult(output) && output.isError === true)
    return { type: "error-text", value: output.content.map(textOf).join("\n") };
  if (structured || !isToolResult(output)) return { type: "json", value: output as JSONValue };
  return { type: "content", value: output.content.map(partOf) };
}

function partOf(block: ContentBlock): ModelPart {
  if (block.type === "image")
    return { type: "file", mediaType: block.mimeType, data: { type: "data", data: block.data } };
  return { type: "text", text: textOf(block) };
}

/** A block as text: its text, an embedded text resource's text, anything else as JSON. */
function textOf(block: ContentBlock): string {
  if (block.type === "text") return block.text;
  if (block.type === "resource" && "text" in block.resource) return block.resource.text;
  return JSON.stringify(block);
}
