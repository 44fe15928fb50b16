// The official-SDK counterpart of `tether tools -- <command>`: the v1 client over stdio,
// connect, list tools, print the names, close.
//
//   node bench/scripts/official-v1-tools.mjs <command> [args...]

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "official-v1", version: "0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const { tools } = await client.listTools();
process.stdout.write(`${tools.map((t) => t.name).join("\n")}\n`);
await client.close();
