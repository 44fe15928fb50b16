// Streamable HTTP server of protocol 2025-11-25 (SDK 1.32.2) at /mcp; it also accepts every
// older revision the SDK knows, down to 2024-11-05.
//
//   node examples/servers/streamable-2025-11-25.mjs [--port N] [--json] [--stateless] [--resumable]
//
// --json (or MCP_JSON_RESPONSE=1): replies are plain JSON bodies instead of SSE streams.
// --stateless: no sessions; each POST gets a fresh server, GET and DELETE answer 405.
// --resumable: keeps events in memory so SSE streams open with a priming event (an id, empty
//   data, `retry: 1000`) and clients can resume with GET + Last-Event-ID.

import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as types from "@modelcontextprotocol/sdk/types.js";
import { parseArgs, serve } from "./lib/http.mjs";
import { streamableHttp } from "./lib/streamable-v1.mjs";

const { port, flags } = parseArgs();
const transportOptions = {
  enableJsonResponse: flags.has("json") || process.env.MCP_JSON_RESPONSE === "1",
  ...(flags.has("resumable") ? { eventStore: new InMemoryEventStore(), retryInterval: 1000 } : {}),
};
const mcp = streamableHttp(
  { Server, StreamableHTTPServerTransport, types },
  { stateless: flags.has("stateless"), transportOptions },
);
await serve(mcp.handle, { path: "/mcp", port, flags, onClose: mcp.close });
