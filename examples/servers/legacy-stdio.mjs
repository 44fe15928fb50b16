// stdio server of protocol 2025-11-25 and older (SDK 1.32.2, `StdioServerTransport`).
//
//   node examples/servers/legacy-stdio.mjs
//
// The reference server is also installed; it needs the transport name as its only argument:
//   node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as types from "@modelcontextprotocol/sdk/types.js";
import { installOnV1Server, SERVER_INFO, V1_CAPABILITIES } from "./lib/fixture.mjs";

const server = installOnV1Server(new Server(SERVER_INFO, { capabilities: V1_CAPABILITIES }), types);
await server.connect(new StdioServerTransport());

const shutdown = () => server.close().finally(() => process.exit(0));
process.once("SIGTERM", shutdown);
process.once("SIGINT", shutdown);
