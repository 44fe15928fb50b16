// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config files write ${...} references literally
// Config formats through the built CLI: VS Code's JSONC with ${workspaceFolder}, Codex's TOML in
// the user's home, Claude Code's per-project servers, and ${input:ID} refused off a terminal.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const server = fileURLToPath(new URL("../../examples/servers/legacy-stdio.mjs", import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), "tether-cli-config-")));
after(() => rmSync(root, { recursive: true, force: true }));

function file(rel: string, text: string): string {
  const path = join(root, rel);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

describe("config formats from the CLI", () => {
  test("S3: a VS Code mcp.json with comments and trailing commas works; ${workspaceFolder} is its project folder", async () => {
    const config = file(
      "proj/.vscode/mcp.json",
      `{
  // comments are allowed
  "servers": {
    "legacy": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(server)},], "cwd": "\${workspaceFolder}", },
  },
}`,
    );
    const run = await runCli(["tools", "legacy", "--config", config, "--json"]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok((JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.some((t) => t.name === "echo"));
  });

  test("S3: Codex's ~/.codex/config.toml is one of the usual places", async () => {
    const home = join(root, "home-codex");
    file(
      "home-codex/.codex/config.toml",
      `[mcp_servers.codexed]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(server)}]\n`,
    );
    const run = await runCli(["tools", "codexed", "--json"], { env: { HOME: home, XDG_CONFIG_HOME: home } });
    assert.equal(run.code, 0, run.stderr);
    const listed = await runCli(["servers", "--json"], { env: { HOME: home, XDG_CONFIG_HOME: home } });
    assert.match(listed.stdout, /"codexed"/);
  });

  test("S3: ${input:ID} off a terminal is a config error naming the file and key, and nothing starts", async () => {
    const config = file(
      "input/.vscode/mcp.json",
      JSON.stringify({
        servers: {
          asks: { command: process.execPath, args: [server], env: { TOKEN: "${input:token}" } },
        },
      }),
    );
    const run = await runCli(["tools", "asks", "--config", config]);
    assert.equal(run.code, 2, run.stderr);
    const record = errorRecord(run);
    assert.equal(record.reason, "input_required");
    assert.match(String(record.message), /servers\.asks\.env\.TOKEN uses \$\{input:token\}/);
  });
});

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

test("S3: on a terminal ${input:ID} is asked for; the answer reaches the server and is redacted as a secret", {
  skip: !hasScript && "no script(1)",
}, () => {
  const s = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "i", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "got-" + process.env.TOKEN, inputSchema: { type: "object" } }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
  try {
    const config = file(
      "asked/.vscode/mcp.json",
      JSON.stringify({
        servers: { asks: { command: s.command, args: s.args, env: { TOKEN: "${input:token}" } } },
      }),
    );
    const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} tools asks --config ${JSON.stringify(config)}`;
    const out = execFileSync("script", ["-qc", command, "/dev/null"], {
      encoding: "utf8",
      timeout: 20_000,
      input: "answer42\n",
    });
    assert.match(out, /servers\.asks\.env\.TOKEN asks for token: /);
    // The server named its tool after the answer; the CLI knows the answer as a secret and redacts it.
    assert.match(out, /got-\[redacted\]\(\)/);
  } finally {
    s.dispose();
  }
});
