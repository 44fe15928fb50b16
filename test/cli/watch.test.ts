// `tether watch`: log messages at the asked level, list changes and subscribed resource updates,
// as lines or NDJSON written as they arrive, until --duration or Ctrl-C.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, test } from "node:test";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { logging: {}, tools: { listChanged: true }, resources: { subscribe: true } }, serverInfo: { name: "w", version: "1" } } });
  if (m.method === "logging/setLevel") {
    send({ jsonrpc: "2.0", id: m.id, result: {} });
    send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "warning", logger: "disk", data: "almost full" } });
    return send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  }
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [] } });
  if (m.method === "resources/subscribe") {
    send({ jsonrpc: "2.0", id: m.id, result: {} });
    return send({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: m.params.uri } });
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());
const stdio = () => ["--", server.command, ...server.args];

test("M2: watch --json prints NDJSON for a log message, a list change and a resource update, then ends at --duration", async () => {
  const run = await runCli([
    "watch",
    "--log-level",
    "info",
    "--subscribe",
    "demo://doc",
    "--duration",
    "1500",
    "--json",
    ...stdio(),
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, "");
  const lines = run.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    lines.find((l) => l.type === "log"),
    { type: "log", level: "warning", logger: "disk", data: "almost full" },
  );
  assert.ok(lines.some((l) => l.type === "list_changed" && l.list === "tools"));
  assert.ok(lines.some((l) => l.type === "resource_updated" && l.uri === "demo://doc"));
});

test("K1: watch prints readable lines as they arrive, and Ctrl-C ends it with status 0", async () => {
  const child = spawn(process.execPath, [CLI_BIN, "watch", "--log-level", "info", ...stdio()], {
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const seen = new Promise<void>((resolve) =>
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("tools changed")) resolve();
    }),
  );
  await seen; // the lines arrived while the watch still runs: they are not held back to the end
  child.kill("SIGINT");
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(code, 0);
  assert.match(out, /log warning \[disk\]: almost full/);
});

test("K1: a --log-level that is not a level is a config error", async () => {
  const run = await runCli(["watch", "--log-level", "loud", ...stdio()]);
  assert.equal(run.code, 2);
  assert.match(String(errorRecord(run).message), /--log-level must be one of debug/);
});

test("M2: --log-level on another command shows the server's log messages on stderr; stdout keeps its result", async () => {
  const run = await runCli(["tools", "--log-level", "warning", "--json", ...stdio()]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { tools: [] });
  assert.match(run.stderr, /^log warning \[disk\]: almost full\n$/);
});
