// Stateful Streamable HTTP server of protocol 2025-06-18 (SDK 1.13.3) at /mcp.
//
//   node examples/servers/streamable-2025-06-18.mjs [--port N]

import { Server } from "mcp-sdk-2025-06-18/server/index.js";
import { StreamableHTTPServerTransport } from "mcp-sdk-2025-06-18/server/streamableHttp.js";
import * as types from "mcp-sdk-2025-06-18/types.js";
import { parseArgs, serve } from "./lib/http.mjs";
import { streamableHttp } from "./lib/streamable-v1.mjs";

const { port, flags } = parseArgs();
const mcp = streamableHttp({ Server, StreamableHTTPServerTransport, types });
await serve(mcp.handle, { path: "/mcp", port, flags, onClose: mcp.close });
