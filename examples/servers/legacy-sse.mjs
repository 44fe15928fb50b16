// HTTP+SSE server of protocol 2024-11-05 (SDK 1.0.4): GET /sse opens a stream whose first event,
// `endpoint`, names /messages?sessionId=...; POST /messages delivers client messages (202), and
// every reply arrives on the stream. One transport and one Server per GET.
//
//   node examples/servers/legacy-sse.mjs [--port N]

import { Server } from "mcp-sdk-2024-11-05/server/index.js";
import { SSEServerTransport } from "mcp-sdk-2024-11-05/server/sse.js";
import * as types from "mcp-sdk-2024-11-05/types.js";
import { installOnV1Server, SERVER_INFO, V1_CAPABILITIES } from "./lib/fixture.mjs";
import { parseArgs, serve } from "./lib/http.mjs";

const { port, flags } = parseArgs();
const sessions = new Map();

async function openStream(res) {
  // SDK 1.0.4 hands tool handlers no request headers, so whoami reports the last POST's.
  const session = { headers: {}, transport: new SSEServerTransport("/messages", res) };
  const server = installOnV1Server(
    new Server(SERVER_INFO, { capabilities: V1_CAPABILITIES }),
    types,
    () => session.headers,
  );
  const { sessionId } = session.transport;
  sessions.set(sessionId, session);
  res.on("close", () => sessions.delete(sessionId));
  await server.connect(session.transport);
}

async function handle(req, res) {
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/sse") {
    if (req.method === "GET") return openStream(res);
    res.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end("Method not allowed");
    return;
  }
  if (url.pathname === "/messages" && req.method === "POST") {
    const session = sessions.get(url.searchParams.get("sessionId") ?? "");
    if (!session) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Session not found");
      return;
    }
    session.headers = req.headers;
    // Rejects after it has already answered 400/500 itself; nothing more to send.
    await session.transport.handlePostMessage(req, res).catch(() => {});
    return;
  }
  res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
}

await serve(handle, {
  path: "/sse",
  port,
  flags,
  onClose: () => Promise.all([...sessions.values()].map((session) => session.transport.close())),
});
