// stdio server of protocol 2026-07-28 (@modelcontextprotocol/server 2.4.0, `serveStdio`).
//
//   node examples/servers/modern-stdio.mjs [--modern-only]
//
// serveStdio is dual-era: the connection's opening message picks the era. A request carrying the
// 2026-07-28 `_meta` envelope (e.g. `server/discover`) pins the connection to the modern era; an
// `initialize` pins it to a 2025-era instance from the same factory. --modern-only answers a
// 2025-era opening with the unsupported-version error and keeps waiting for a modern one.

import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createFixtureServer } from "./lib/fixture-v2.mjs";

const legacy = process.argv.includes("--modern-only") ? "reject" : "serve";
const connection = serveStdio(createFixtureServer, { legacy });

const shutdown = () => connection.close().finally(() => process.exit(0));
process.once("SIGTERM", shutdown);
process.once("SIGINT", shutdown);
