// Streamable HTTP server of protocol 2026-07-28 (@modelcontextprotocol/server 2.4.0) at /mcp:
// stateless, no handshake, one McpServer per request from `createMcpHandler`.
//
//   node examples/servers/modern-2026-07-28.mjs [--port N] [--modern-only] [--sse]
//
// createMcpHandler is dual-era by default (`legacy: "stateless"`): a POST without the `_meta`
// envelope (e.g. `initialize`) is served 2025-era style by a fresh stateless instance, with no
// session id, GET and DELETE answered 405. `server/discover` lists only "2026-07-28" either way.
// --modern-only sets `legacy: "reject"`: envelope-less requests get the unsupported-version error.
// --sse streams every reply; the default ("auto") answers JSON unless a handler emits a message
// before its result.

import { createMcpHandler } from "@modelcontextprotocol/server";
import { createFixtureServer } from "./lib/fixture-v2.mjs";
import { fromFetchHandler, parseArgs, serve } from "./lib/http.mjs";

const { port, flags } = parseArgs();
const handler = createMcpHandler(createFixtureServer, {
  legacy: flags.has("modern-only") ? "reject" : "stateless",
  responseMode: flags.has("sse") ? "sse" : "auto",
});
const toNode = fromFetchHandler(handler.fetch);

async function handle(req, res) {
  if (new URL(req.url, "http://127.0.0.1").pathname !== "/mcp") {
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
    return;
  }
  await toNode(req, res);
}

await serve(handle, { path: "/mcp", port, flags, onClose: handler.close });
