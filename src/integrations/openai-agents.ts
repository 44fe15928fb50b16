/**
 * `mcp-tether/openai-agents`: a tether client as the OpenAI Agents SDK's `MCPServer`, so
 * `new Agent({ mcpServers: [server] })` reaches the server through tether. Each call goes through
 * the client's request path with the run's abort signal and the budgets given here; the tool's own
 * failure (`isError: true`) is the result the model sees, and a failure of tether's (a timeout, a
 * limit, a lost connection) is a thrown `TetherToolError` with the public code and tether's words
 * only, which the default `errorFunction` here hands the model. `@openai/agents` is an optional
 * peer: only this entry imports it.
 */

import {
  type CallToolResult as AgentsCallToolResult,
  type CallToolResultContent,
  invalidateServerToolsCache,
  type MCPCallToolOptions,
  type MCPServer,
  type MCPToolCustomDataExtractor,
  type MCPToolErrorFunction,
  type MCPToolFilterCallable,
  type MCPToolFilterStatic,
} from "@openai/agents";
import type { Client, OperationOptions } from "../client/api.ts";
import type { CallToolResult, Tool } from "../client/results.ts";
import { connect } from "../connect/connect.ts";
import { configError } from "../errors/failures.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { ConnectOptions } from "../options/options.ts";
import { type CallBudgets, selectTools, TetherToolError, type ToolSelection, toolFailure } from "./tools.ts";

export type { CallBudgets, ToolSelection } from "./tools.ts";
export { TetherToolError } from "./tools.ts";

/** How a client is offered to the Agents SDK. */
export interface AgentsServerOptions extends ToolSelection {
  /** The server's name in the SDK's traces and tool cache (default: the server's own name, else `tether`). */
  name?: string;
  /** The budgets of every call (`timeoutMs`, `maxResponseBytes`, progress...); the run's abort signal is added to each. */
  call?: CallBudgets;
  /** The signal and budgets of each tool listing. */
  list?: OperationOptions;
  /** Let the SDK keep the tool list between runs (default false); it is dropped when the server says its tools changed. */
  cacheToolsList?: boolean;
  /** The SDK's own filter, applied after this selection (its names are the offered ones). */
  toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic;
  /** Hand the model `structuredContent` when a tool returns it (the SDK's option). */
  useStructuredContent?: boolean;
  /** The SDK's custom data extractor for tool outputs. */
  customDataExtractor?: MCPToolCustomDataExtractor;
  /** Guardrails applied before every tool of this server runs. */
  toolInputGuardrails?: MCPServer["toolInputGuardrails"];
  /** Guardrails applied after every tool of this server returns. */
  toolOutputGuardrails?: MCPServer["toolOutputGuardrails"];
  /**
   * What the model reads when a call fails (the SDK's option). The default gives a
   * `TetherToolError`'s message (code and tether's own words) and the SDK's fixed text for
   * anything else; `null` throws the failure out of the run instead.
   */
  errorFunction?: MCPToolErrorFunction | null;
}

/** A tool as the SDK lists one (its type is not exported by name). */
type MCPTool = Awaited<ReturnType<MCPServer["listTools"]>>[number];

const GENERIC_FAILURE = "An error occurred while running the tool. Please try again.";

/** The model reads a tether failure's public message; anything else only the SDK's fixed text. */
const tetherErrorFunction: MCPToolErrorFunction = ({ error }) =>
  error instanceof TetherToolError ? error.message : GENERIC_FAILURE;

function isClient(source: Client | ConnectOptions): source is Client {
  return typeof (source as Client).callTool === "function";
}

/**
 * A tether client as the Agents SDK's MCP server. Given a connected client, `connect()` does
 * nothing and `close()` leaves the client open (its owner closes it); given connect options,
 * `connect()` establishes the connection and `close()` closes it. While connected, the
 * server's `notifications/tools/list_changed` drops the SDK's cached tool list.
 */
export class TetherMcpServer implements MCPServer {
  readonly name: string;
  cacheToolsList: boolean;
  toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic;
  useStructuredContent?: boolean;
  customDataExtractor?: MCPToolCustomDataExtractor;
  toolInputGuardrails?: MCPServer["toolInputGuardrails"];
  toolOutputGuardrails?: MCPServer["toolOutputGuardrails"];
  errorFunction?: MCPToolErrorFunction | null;

  readonly #source: Client | ConnectOptions;
  readonly #options: AgentsServerOptions;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #stopFollowing: (() => void) | undefined;
  /** Offered name to the server's name, from the last listing. */
  #names = new Map<string, string>();

  constructor(source: Client | ConnectOptions, options: AgentsServerOptions = {}) {
    this.#source = source;
    this.#options = options;
    this.name = options.name ?? (isClient(source) ? source.serverInfo?.name : undefined) ?? "tether";
    this.cacheToolsList = options.cacheToolsList ?? false;
    this.toolFilter = options.toolFilter;
    this.useStructuredContent = options.useStructuredContent;
    this.customDataExtractor = options.customDataExtractor;
    this.toolInputGuardrails = options.toolInputGuardrails;
    this.toolOutputGuardrails = options.toolOutputGuardrails;
    this.errorFunction = options.errorFunction === undefined ? tetherErrorFunction : options.errorFunction;
    if (isClient(source)) this.#attach(source);
  }

  /** The client behind this server, once connected. */
  get client(): Client | undefined {
    return this.#client;
  }

  async connect(): Promise<void> {
    if (this.#client || isClient(this.#source)) return;
    this.#connecting ??= connect(this.#source);
    try {
      this.#attach(await this.#connecting);
    } finally {
      this.#connecting = undefined;
    }
  }

  async close(): Promise<void> {
    this.#stopFollowing?.();
    this.#stopFollowing = undefined;
    const client = this.#client;
    await this.invalidateToolsCache();
    if (isClient(this.#source)) return;
    this.#client = undefined;
    await client?.close();
  }

  async listTools(): Promise<MCPTool[]> {
    const chosen = selectTools(await this.#connected().listTools(this.#options.list), this.#options);
    this.#names = new Map([...chosen].map(([name, tool]) => [name, tool.name]));
    return [...chosen].map(([name, tool]) => agentsTool(name, tool));
  }

  async callTool(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResultContent> {
    const result = await this.callToolResult(toolName, args, meta, options);
    // The SDK's shape: the content, with the rest of the result on it (not enumerable).
    const content = [...result.content] as CallToolResultContent;
    for (const key of ["structuredContent", "isError", "_meta"] as const)
      if (result[key] !== undefined)
        Object.defineProperty(content, key, { value: result[key], enumerable: false, configurable: true });
    return content;
  }

  async callToolResult(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<AgentsCallToolResult> {
    const client = this.#connected();
    const signal = options?.signal;
    let result: CallToolResult;
    try {
      if (meta && Object.keys(meta).length > 0)
        throw configError("call_meta_unsupported", "tether sends no caller _meta with a tool call");
      result = await client.callTool(await this.#serverName(toolName), (args ?? {}) as JsonObject, {
        ...this.#options.call,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw toolFailure(toolName, error, signal);
    }
    return result as AgentsCallToolResult;
  }

  async invalidateToolsCache(): Promise<void> {
    await invalidateServerToolsCache(this.name);
  }

  #attach(client: Client): void {
    this.#client = client;
    this.#stopFollowing = client.onListChanged("tools", () => this.invalidateToolsCache());
  }

  /**
   * The server's name of a tool the model named. The SDK may call with a name from a tool list it
   * cached before this server listed (a cache is kept by server name): then this server lists.
   */
  async #serverName(toolName: string): Promise<string> {
    if (!this.#names.has(toolName) && (this.#options.rename || this.#options.prefix)) await this.listTools();
    return this.#names.get(toolName) ?? toolName;
  }

  #connected(): Client {
    if (!this.#client) throw new Error(`the MCP server ${this.name} is not connected: call connect() first`);
    return this.#client;
  }
}

/** A tool as the SDK lists one: an object input schema with properties and required names. */
function agentsTool(name: string, tool: Tool): MCPTool {
  const schema = tool.inputSchema;
  return {
    name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: {
      ...schema,
      type: "object",
      properties: (schema.properties as Record<string, unknown> | undefined) ?? {},
      required: (schema.required as string[] | undefined) ?? [],
    } as MCPTool["inputSchema"],
  };
}
