import type { Era, TransportMode } from "../errors/codes.ts";
import { limitError, protocolError, type Where } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { OutputValidator } from "../options/output-validator.ts";
import { type HeaderParam, headerParamsOf } from "../protocol/modern-headers.ts";
import { defaultValidator, OutputSchemaMismatch } from "./output-schema.ts";
import { malformedResult } from "./result-errors.ts";
import type { CallToolResult, Tool } from "./results.ts";
import { callToolResult, isObject } from "./shapes.ts";

/** What the catalog needs to know about the connection and its bounds. */
export interface CatalogContext {
  era: Era;
  transportMode: TransportMode;
  maxTools: number;
  maxToolSchemaBytes: number;
  redactor: Redactor;
  /** A replacement output validator, `false` for none, or undefined for the default. */
  validateOutput: OutputValidator | false | undefined;
}

/**
 * The tools the client knows from listings, until the server says they changed: each admitted
 * (schema size bounded, x-mcp-header annotations checked on modern HTTP), their header
 * parameters for calls, and their output schemas, which a call's `structuredContent` is checked
 * against (M3).
 */
export class ToolCatalog {
  readonly #c: CatalogContext;
  /** The last full listing, for `cachedTools`. */
  #tools: Tool[] | undefined;
  /** Tools seen in listings (full or by page) since the last change notice, by name. */
  #known = new Map<string, Tool>();
  /** Whether `#known` holds a full listing. */
  #listed = false;
  /** The one listing made to find an unknown tool's output schema, until the tools change. */
  #schemaFetch: Promise<void> | undefined;
  readonly #headerParams = new Map<string, HeaderParam[]>();

  constructor(context: CatalogContext) {
    this.#c = context;
  }

  get cached(): Tool[] | undefined {
    return this.#tools;
  }

  get(name: string): Tool | undefined {
    return this.#known.get(name);
  }

  /** The arguments a modern HTTP call of this tool mirrors into headers. */
  headerParams(name: string): HeaderParam[] | undefined {
    return this.#headerParams.get(name);
  }

  /** A full listing: it replaces what was known. */
  listed(tools: Tool[], known: Map<string, Tool>): void {
    this.#tools = tools;
    this.#known = known;
    this.#listed = true;
  }

  /** One page of a listing: its tools are known too, up to `maxTools`. */
  paged(tools: Tool[]): void {
    for (const tool of tools) if (this.#known.size < this.#c.maxTools) this.#known.set(tool.name, tool);
  }

  /** The server's tools changed: nothing known stands. */
  invalidate(): void {
    this.#tools = undefined;
    this.#known = new Map();
    this.#listed = false;
    this.#schemaFetch = undefined;
  }

  /** One listed tool as the client keeps it, or undefined to leave it out. */
  admit(raw: JsonObject): Tool | undefined {
    if (typeof raw.name !== "string" || !isObject(raw.inputSchema)) return undefined;
    // An output schema that is not an object cannot be checked against: the tool is left out.
    if (raw.outputSchema !== undefined && !isObject(raw.outputSchema)) return undefined;
    this.#checkSchemaSize(raw.inputSchema);
    if (raw.outputSchema !== undefined) this.#checkSchemaSize(raw.outputSchema);
    if (this.#c.era === "modern" && this.#c.transportMode !== "stdio") {
      let params: ReturnType<typeof headerParamsOf>;
      try {
        params = headerParamsOf(raw.inputSchema);
      } catch {
        params = undefined;
      }
      // A tool whose x-mcp-header annotations break the rules is left out, as the spec requires.
      if (!params) return undefined;
      this.#headerParams.set(raw.name, params);
    }
    return raw as Tool;
  }

  /**
   * A tool's result, its shape and output schema checked. `list` lists the tools once when the
   * result carries structured content for a tool not listed yet.
   */
  async toolResult(
    name: string | undefined,
    raw: JsonObject,
    signal: AbortSignal | undefined,
    list: (signal: AbortSignal | undefined) => Promise<unknown>,
  ): Promise<CallToolResult> {
    const result = callToolResult(raw);
    if (!result) throw malformedResult(this.#c.redactor, "the tool result had no content array");
    if (name !== undefined && this.#mayCheck(name, result))
      await this.#checkOutput(name, result, signal, list);
    return result;
  }

  /**
   * Whether `#checkOutput` could do anything for this result: it has a schema to check against,
   * or it may have to list the tools to learn one. Most tools have no output schema, and asking
   * first spares their every call an async step.
   */
  #mayCheck(name: string, result: CallToolResult): boolean {
    if (this.#c.validateOutput === false || result.isError === true) return false;
    if (this.#known.get(name)?.outputSchema) return true;
    return result.structuredContent !== undefined && !this.#known.has(name) && !this.#listed;
  }

  /**
   * Checks `structuredContent` against the tool's `outputSchema`. The schema comes from the last
   * listing; a tool not listed yet whose result carries structured content makes the client list
   * the tools once (until they change). A tool that reported an error is not checked, nor is
   * anything when the caller switched checking off.
   */
  async #checkOutput(
    name: string,
    result: CallToolResult,
    signal: AbortSignal | undefined,
    list: (signal: AbortSignal | undefined) => Promise<unknown>,
  ): Promise<void> {
    const validateOutput = this.#c.validateOutput;
    if (validateOutput === false || result.isError === true) return;
    if (!this.#known.has(name) && !this.#listed && result.structuredContent !== undefined) {
      this.#schemaFetch ??= list(signal).then(
        () => {},
        () => {},
      );
      await this.#schemaFetch;
    }
    const schema = this.#known.get(name)?.outputSchema;
    if (!schema) return;
    const where: Where = { stage: "call", phase: "call", redactor: this.#c.redactor, effect: "done" };
    if (result.structuredContent === undefined)
      throw protocolError(
        where,
        "output_schema_mismatch",
        "the tool has an outputSchema but its result carried no structuredContent",
      );
    let verdict: { valid: boolean; errors?: string[] };
    try {
      const validate = validateOutput ?? (await defaultValidator());
      verdict = validate(schema, result.structuredContent);
    } catch (error) {
      throw protocolError(where, "output_schema_invalid", "the tool's outputSchema could not be used", error);
    }
    if (!verdict.valid) {
      const n = verdict.errors?.length ?? 0;
      throw protocolError(
        where,
        "output_schema_mismatch",
        `the tool's structuredContent does not match its outputSchema${n > 0 ? ` (${n} finding${n === 1 ? "" : "s"})` : ""}`,
        new OutputSchemaMismatch(verdict.errors ?? []),
      );
    }
  }

  #checkSchemaSize(schema: JsonObject): void {
    const where = { stage: "list_tools" as const, phase: "discovery" as const, redactor: this.#c.redactor };
    const maxToolSchemaBytes = this.#c.maxToolSchemaBytes;
    let schemaBytes: number;
    try {
      schemaBytes = Buffer.byteLength(JSON.stringify(schema));
    } catch {
      // Nested too deep to serialise: no schema a tool can use is like that.
      throw limitError(
        where,
        "tool_schema_too_deep",
        "a tool's schema is nested too deeply to be used",
        undefined,
        {
          maxToolSchemaBytes,
        },
      );
    }
    if (schemaBytes > maxToolSchemaBytes) {
      throw limitError(
        where,
        "tool_schema_too_large",
        `a tool's schema passed the ${maxToolSchemaBytes}-byte ceiling`,
        schemaBytes,
        { maxToolSchemaBytes },
      );
    }
  }
}
