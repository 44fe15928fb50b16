// The floor for a cold CLI start: spawn the server, send initialize + initialized + tools/list as
// raw newline-delimited JSON, print the tool names, close stdin and wait for the server to exit.
// No library, no validation, no timeouts: the least any client must do on this wire.
//
//   node bench/scripts/floor-stdio.mjs <command> [args...]

import { spawn } from "node:child_process";

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
const waiting = new Map();
let buffered = "";
child.stdout.setEncoding("utf8").on("data", (chunk) => {
  buffered += chunk;
  for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() === "") continue;
    const message = JSON.parse(line);
    waiting.get(message.id)?.(message);
  }
});
const request = (id, method, params) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  });

await request(1, "initialize", {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "floor", version: "0" },
});
child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
const listed = await request(2, "tools/list", {});
process.stdout.write(`${listed.result.tools.map((t) => t.name).join("\n")}\n`);
const exited = new Promise((resolve) => child.once("exit", resolve));
child.stdin.end();
const kill = setTimeout(() => child.kill("SIGTERM"), 500);
await exited;
clearTimeout(kill);
