// The Streamable HTTP wiring shared by the v1-SDK servers (1.13.3 and 1.32.2), written the way the
// SDK's own examples wire it: stateful sessions keyed by Mcp-Session-Id, created by `initialize`;
// or stateless, one Server and transport per POST with GET and DELETE answered 405.

import { randomUUID } from "node:crypto";
import { installOnV1Server, SERVER_INFO, V1_CAPABILITIES } from "./fixture.mjs";
import { readJsonBody, sendJsonRpcError } from "./http.mjs";

/**
 * Returns `{ handle(req, res), close() }` serving MCP at `path`. `sdk` holds that SDK version's
 * `Server`, `StreamableHTTPServerTransport` and `types` module; `transportOptions` is passed to
 * every transport (e.g. `enableJsonResponse`, `eventStore`).
 */
export function streamableHttp(sdk, { path = "/mcp", stateless = false, transportOptions = {} } = {}) {
  const { Server, StreamableHTTPServerTransport, types } = sdk;
  const transports = new Map();
  const newServer = () =>
    installOnV1Server(
      new Server(SERVER_INFO, { capabilities: V1_CAPABILITIES }),
      types,
      (extra) => extra.requestInfo?.headers ?? {},
    );

  async function handleStateless(req, res) {
    if (req.method !== "POST") return sendJsonRpcError(res, 405, -32000, "Method not allowed.");
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({
      ...transportOptions,
      sessionIdGenerator: undefined,
    });
    res.on("close", () => server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  async function handleStateful(req, res) {
    const sessionId = req.headers["mcp-session-id"];
    if (sessionId !== undefined) {
      const transport = transports.get(sessionId);
      if (!transport) return sendJsonRpcError(res, 404, -32001, "Session not found");
      return transport.handleRequest(req, res);
    }
    if (req.method !== "POST")
      return sendJsonRpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
    const body = await readJsonBody(req);
    if (!body.ok) return sendJsonRpcError(res, body.status, -32700, body.message);
    if (!types.isInitializeRequest(body.value)) {
      return sendJsonRpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
    }
    const transport = new StreamableHTTPServerTransport({
      ...transportOptions,
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    // Set before connect: the SDK chains a pre-existing onclose rather than replacing it.
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body.value);
  }

  return {
    async handle(req, res) {
      if (new URL(req.url, "http://127.0.0.1").pathname !== path) {
        res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
        return;
      }
      await (stateless ? handleStateless(req, res) : handleStateful(req, res));
    },
    close: () => Promise.all([...transports.values()].map((transport) => transport.close())),
  };
}
