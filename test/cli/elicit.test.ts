// Server elicitation from the CLI: on a terminal each field of the requested schema is asked for
// and the typed answer sent back; off a terminal (or with --json) each request is declined.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, test } from "node:test";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";

/** A tool that asks the client for a name and an age when the client declared elicitation. */
const server = startStdioScript(`
let pending;
let declared = false;
onMessage((m) => {
  if (m.method === "initialize") {
    declared = !!(m.params.capabilities && m.params.capabilities.elicitation);
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "e", version: "1" } } });
  }
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ask", inputSchema: { type: "object" } }] } });
  if (m.method === "tools/call") {
    if (!declared) return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "not asked" }] } });
    pending = m.id;
    return send({ jsonrpc: "2.0", id: "q1", method: "elicitation/create", params: { message: "Who are you?", requestedSchema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name"] } } });
  }
  if (m.id === "q1" && m.result) return send({ jsonrpc: "2.0", id: pending, result: { content: [{ type: "text", text: "answer " + JSON.stringify(m.result) }] } });
  if (m.id !== undefined && m.method) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

test("K1: on a terminal the server's question is asked field by field and the typed answer is sent", {
  skip: !hasScript && "no script(1)",
}, () => {
  const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} call ask -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
  const out = execFileSync("script", ["-qc", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 20_000,
    input: "Ada\n36\n",
  }).replace(/\r/g, "");
  assert.match(out, /Who are you\?/);
  assert.match(out, /name \(string\): /);
  assert.match(out, /age \(integer, optional\): /);
  assert.match(out, /answer \{"action":"accept","content":\{"name":"Ada","age":36\}\}/);
});

test("M4: off a terminal elicitation is declared and each request is declined at once", async () => {
  const run = await runCli(["call", "ask", "--", server.command, ...server.args]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'answer {"action":"decline"}\n');
  assert.equal(run.stderr, "", "nothing is asked");
});

test("M4: with --json, even on a terminal, elicitation is declined rather than asked", {
  skip: !hasScript && "no script(1)",
}, () => {
  const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} call ask --json -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
  const out = execFileSync("script", ["-qc", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 20_000,
    input: "",
  }).replace(/\r/g, "");
  assert.doesNotMatch(out, /Who are you\?/);
  assert.match(out, /answer \{\\"action\\":\\"decline\\"\}/);
});
