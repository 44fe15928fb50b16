import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/**
 * The HTTP headers a 2026-07-28 request carries, mirrored from its body so intermediaries can
 * route without parsing it: MCP-Protocol-Version, Mcp-Method, Mcp-Name, and Mcp-Param-* for tool
 * arguments whose schema marks them with `x-mcp-header`.
 */

const SENTINEL = /^=\?base64\?.*\?=$/s;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header value as the spec encodes it: plain when safe, else `=?base64?…?=` of its UTF-8. */
export function encodeHeaderValue(value: string): string {
  const safe = /^[\x20-\x7e\t]*$/.test(value) && value.trim() === value && !SENTINEL.test(value);
  return safe ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/** Where in a tool's arguments each `x-mcp-header` value comes from. */
export interface HeaderParam {
  header: string;
  path: string[];
}

/**
 * Reads a tool's `x-mcp-header` annotations. Returns undefined when an annotation breaks the
 * spec's rules (such a tool is left out of tools/list on HTTP); [] when there are none.
 */
export function headerParamsOf(inputSchema: unknown): HeaderParam[] | undefined {
  const out: HeaderParam[] = [];
  const seen = new Set<string>();
  let valid = true;
  const visit = (schema: unknown, path: string[], reachable: boolean) => {
    if (!valid || typeof schema !== "object" || schema === null) return;
    const s = schema as Record<string, unknown>;
    if ("x-mcp-header" in s) {
      const name = s["x-mcp-header"];
      const type = s.type;
      if (
        !reachable ||
        path.length === 0 ||
        typeof name !== "string" ||
        !TOKEN.test(name) ||
        seen.has(name.toLowerCase()) ||
        !(type === "string" || type === "integer" || type === "boolean")
      ) {
        valid = false;
        return;
      }
      seen.add(name.toLowerCase());
      out.push({ header: name, path });
    }
    for (const [key, child] of Object.entries(s)) {
      if (key === "properties" && typeof child === "object" && child !== null) {
        for (const [prop, sub] of Object.entries(child as Record<string, unknown>))
          visit(sub, [...path, prop], reachable);
      } else if (typeof child === "object" && child !== null && key !== "x-mcp-header") {
        // Annotations under items, composition, conditionals or $ref are not statically reachable.
        if (Array.isArray(child)) for (const c of child) visit(c, path, false);
        else visit(child, path, false);
      }
    }
  };
  visit(inputSchema, [], true);
  return valid ? out : undefined;
}

function valueAt(args: JsonObject | undefined, path: string[]): JsonValue | undefined {
  let v: JsonValue | undefined = args;
  for (const key of path) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
    v = v[key];
  }
  return v;
}

/** The headers of one modern request. */
export function modernHeaders(
  version: string,
  method: string,
  params: JsonObject | undefined,
  headerParams: readonly HeaderParam[] = [],
): Record<string, string> {
  const h: Record<string, string> = { "mcp-protocol-version": version, "mcp-method": method };
  const name =
    method === "tools/call" || method === "prompts/get"
      ? params?.name
      : method === "resources/read"
        ? params?.uri
        : undefined;
  if (typeof name === "string") h["mcp-name"] = encodeHeaderValue(name);
  if (method === "tools/call") {
    const args = params?.arguments;
    for (const p of headerParams) {
      const v = valueAt(
        typeof args === "object" && args !== null && !Array.isArray(args) ? args : undefined,
        p.path,
      );
      if (v === undefined || v === null) continue;
      const text =
        typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined;
      if (text !== undefined) h[`mcp-param-${p.header.toLowerCase()}`] = encodeHeaderValue(text);
    }
  }
  return h;
}

/** The `_meta` fields every modern request carries. */
export function modernMeta(
  version: string,
  clientInfo: { name: string; version: string },
  capabilities: JsonObject = {},
): JsonObject {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": clientInfo,
  };
}

/** Params with the modern `_meta` merged in (the caller's own `_meta` keys kept). */
export function withModernMeta(
  params: JsonObject | undefined,
  version: string,
  clientInfo: { name: string; version: string },
  capabilities: JsonObject = {},
): JsonObject {
  const own = params?._meta;
  const meta = typeof own === "object" && own !== null && !Array.isArray(own) ? own : {};
  return { ...params, _meta: { ...meta, ...modernMeta(version, clientInfo, capabilities) } };
}
