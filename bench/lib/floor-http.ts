// The floor for §1 and §3 over HTTP: the exact requests a correct client needs for the era, sent
// with no library (no validation, no timeouts, no optional GET stream) through the fetch it is
// handed: the sections hand it the HTTP client ours uses by default (node-http.ts), so the floor
// is what the server, the loopback and that client cost on their own.

import type { BenchClient } from "./clients.ts";

const ACCEPT = "application/json, text/event-stream";

/** The JSON-RPC response in a reply body, whether the server answered JSON or one SSE event. */
function parseReply(text: string, contentType: string | null): { result?: Record<string, unknown> } {
  if (contentType?.startsWith("text/event-stream")) {
    const data = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .find((d) => d.includes('"id"'));
    return JSON.parse(data ?? "{}");
  }
  return JSON.parse(text);
}

/** initialize + initialized + tools/list on a legacy Streamable HTTP server (era known). */
export async function floorLegacyStreamable(
  url: string,
  fetchFn: typeof fetch = fetch,
): Promise<BenchClient> {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetchFn(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "floor", version: "0" } },
  });
  const session = init.headers.get("mcp-session-id");
  const reply = parseReply(await init.text(), init.headers.get("content-type"));
  const version = String(reply.result?.protocolVersion ?? "2025-11-25");
  const headers: Record<string, string> = { "mcp-protocol-version": version };
  if (session) headers["mcp-session-id"] = session;
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers)).arrayBuffer();
  let id = 2;
  return {
    async listTools() {
      const r = await post({ jsonrpc: "2.0", id: id++, method: "tools/list" }, headers);
      return parseReply(await r.text(), r.headers.get("content-type"));
    },
    async callTool(name, args) {
      const r = await post(
        { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } },
        headers,
      );
      return parseReply(await r.text(), r.headers.get("content-type"));
    },
    async close() {
      // Untimed: ends the session so the server does not accumulate them over the runs.
      if (session) await (await fetchFn(url, { method: "DELETE", headers })).arrayBuffer();
    },
    version: () => version,
  };
}

/**
 * server/discover + tools/list on a 2026-07-28 server; with `known` (a discover result already at
 * hand, the warm case) tools/list alone.
 */
export async function floorModern(
  url: string,
  fetchFn: typeof fetch = fetch,
  { known = false }: { known?: boolean } = {},
): Promise<BenchClient> {
  const version = "2026-07-28";
  const meta = {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "floor", version: "0" },
  };
  let id = 1;
  const request = async (method: string, params: Record<string, unknown> = {}, extra = {}) => {
    const r = await fetchFn(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: ACCEPT,
        "mcp-protocol-version": version,
        "mcp-method": method,
        ...extra,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method, params: { ...params, _meta: meta } }),
    });
    return parseReply(await r.text(), r.headers.get("content-type"));
  };
  if (!known) await request("server/discover");
  return {
    listTools: () => request("tools/list"),
    callTool: (name, args) => request("tools/call", { name, arguments: args }, { "mcp-name": name }),
    close: async () => {},
    version: () => version,
  };
}
