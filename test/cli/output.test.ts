// Readable output through the built CLI: piped, nothing is cut (a listed URI pastes into `read`);
// on a terminal, lines fit its width, wide characters measured by display width.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, test } from "node:test";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const LONG_URI = `demo://resources/${"segment/".repeat(15)}end`;

const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { resources: {}, prompts: {} }, serverInfo: { name: "o", version: "1" } } });
  if (m.method === "resources/list") return send({ jsonrpc: "2.0", id: m.id, result: { resources: [
    { uri: ${JSON.stringify(LONG_URI)}, name: "long", description: "日本語の説明がここに入ります。".repeat(6) },
    { uri: "demo://short", name: "short", description: "🚀 rockets" } ] } });
  if (m.method === "prompts/list") return send({ jsonrpc: "2.0", id: m.id, result: { prompts: [
    { name: "greet", description: "Greets", arguments: [{ name: "name", required: true }, { name: "tone" }] } ] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
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

/** Display width, as the CLI measures it (CJK and emoji two columns). */
function width(line: string): number {
  let w = 0;
  for (const ch of line) w += /[\u3000-\u9fff\u{1f300}-\u{1f6ff}]/u.test(ch) ? 2 : 1;
  return w;
}

test("K1: piped, resources are listed whole: the long URI and description are not cut", async () => {
  const run = await runCli(["resources", "--", server.command, ...server.args]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.stdout.includes(LONG_URI), run.stdout);
  assert.ok(!run.stdout.includes("…"));
});

test("K1: prompts list each prompt's arguments", async () => {
  const run = await runCli(["prompts", "--", server.command, ...server.args]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /NAME\s+ARGUMENTS\s+DESCRIPTION/);
  assert.match(run.stdout, /greet\s+name, tone\?\s+Greets/);
});

test("K1: on a 70-column terminal every line fits, wide characters counted twice", {
  skip: !hasScript && "no script(1)",
}, () => {
  const command = `stty cols 70; env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} resources -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
  const out = execFileSync("script", ["-qc", command, "/dev/null"], { encoding: "utf8", timeout: 20_000 });
  const erase = new RegExp(`${String.fromCharCode(27)}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
  const lines = out.replace(/\r/g, "").replace(erase, "").trimEnd().split("\n");
  assert.ok(lines.length >= 3, out);
  for (const line of lines) assert.ok(width(line) <= 70, `${width(line)} columns: ${line}`);
  assert.ok(lines.some((l) => l.includes("…")));
  assert.ok(lines.some((l) => l.includes("demo://short")));
});
