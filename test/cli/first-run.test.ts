// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config files write ${...} references literally
// The first minutes with the CLI, through the built binary: the usual config places from a project
// folder (Claude Code's per-project servers, a broken file or an unset variable harming only what
// it defines), closest names for a mistyped server, the short environment a stdio server gets,
// image sizes as decoded, and `call --task` on a terminal and under Ctrl-C.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const legacy = fileURLToPath(new URL("../../examples/servers/legacy-stdio.mjs", import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), "tether-first-run-")));
after(() => rmSync(root, { recursive: true, force: true }));

function file(rel: string, text: string): string {
  const path = join(root, rel);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A home of our own: only the files a test writes there are the user's config. */
const homeEnv = (home: string) => ({
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  CODEX_HOME: join(home, ".codex"),
});

const SECRET = "sk-first-run-canary-0123456789";

describe("config files from a project folder", () => {
  const home = join(root, "home");
  const project = join(root, "project");
  const other = join(root, "elsewhere");
  mkdirSync(other, { recursive: true });
  // Claude Code's state: servers for this project, and for another one.
  file(
    "home/.claude.json",
    JSON.stringify({
      numStartups: 3,
      projects: {
        [project]: { mcpServers: { "claude-project": { command: process.execPath, args: [legacy] } } },
        [other]: { mcpServers: { "other-project": { command: process.execPath, args: [legacy] } } },
      },
    }),
  );
  file(
    "project/.mcp.json",
    JSON.stringify({
      mcpServers: {
        good: { command: process.execPath, args: [legacy] },
        "needs-var": {
          command: process.execPath,
          args: [legacy],
          env: { TOKEN: "${TETHER_FIRST_RUN_UNSET}" },
        },
      },
    }),
  );
  // A VS Code file with a syntax error (a missing comma), a secret written next to it.
  file(
    "project/.vscode/mcp.json",
    `{
  // comments are fine; the missing comma below is not
  "servers": {
    "broken-one": { "command": "node", "env": { "KEY": "${SECRET}" } "args": [] }
  }
}`,
  );
  // TETHER_FIRST_RUN_UNSET stays unset throughout.
  const env = homeEnv(home);

  test("S3: Claude Code's servers for the current folder are found; another folder's are not", async () => {
    const run = await runCli(["tools", "claude-project", "--json"], { cwd: project, env });
    assert.equal(run.code, 0, run.stderr);
    assert.ok((JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.some((t) => t.name === "echo"));
    const elsewhere = await runCli(["tools", "other-project"], { cwd: project, env });
    assert.equal(elsewhere.code, 2, elsewhere.stderr);
    assert.equal(errorRecord(elsewhere).code, "config");
  });

  test("S3: a broken file and an unset variable harm only what they define; errors name file and key, never a value", async () => {
    const good = await runCli(["tools", "good", "--json"], { cwd: project, env });
    assert.equal(good.code, 0, good.stderr);
    assert.equal(good.stderr, "");
    const unset = await runCli(["tools", "needs-var"], { cwd: project, env });
    assert.equal(unset.code, 2, unset.stderr);
    const record = errorRecord(unset);
    assert.match(String(record.message), /TETHER_FIRST_RUN_UNSET/);
    assert.match(String(record.message), /needs-var/);
    const broken = await runCli(["tools", "broken-one"], { cwd: project, env });
    assert.equal(broken.code, 2, broken.stderr);
    assert.match(broken.stderr, /\.vscode[/\\]mcp\.json/);
    const listing = await runCli(["servers", "--json"], { cwd: project, env });
    assert.equal(listing.code, 0, listing.stderr);
    const listed = JSON.parse(listing.stdout) as { servers: { name: string }[]; errors?: unknown[] };
    assert.deepEqual(listed.servers.map((s) => s.name).sort(), ["claude-project", "good", "needs-var"]);
    assert.match(JSON.stringify(listed.errors), /\.vscode[/\\]mcp\.json/);
    for (const r of [unset, broken, listing]) assert.ok(!(r.stdout + r.stderr).includes(SECRET));
  });

  test("S3: a mistyped server name suggests the closest configured ones and starts nothing", async () => {
    const spy = startStdioScript("onMessage(() => {});");
    after(() => spy.dispose());
    const config = file(
      "typo/.mcp.json",
      JSON.stringify({ mcpServers: { "weather-api": { command: spy.command, args: spy.args } } }),
    );
    const run = await runCli(["tools", "wether-api", "--config", config], { env });
    assert.equal(run.code, 2, run.stderr);
    assert.match(String(errorRecord(run).message), /did you mean weather-api/);
    assert.deepEqual(spy.pids(), [], "the closest server is suggested, never started");
  });
});

describe("what a stdio server is given, and what comes back", () => {
  const fleet = useFleet(["everything-stdio"]);

  test("K1: --help says a stdio server gets a short environment and -e passes more; it is so", async () => {
    const help = await runCli(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout.replace(/\s+/g, " "), /stdio server gets a short environment/);
    assert.match(help.stdout, /-e KEY=VALUE/);
    const s = fleet().stdioServer("everything-stdio");
    const env = { TETHER_FIRST_RUN_PRIVATE: "kept-from-server" };
    const bare = await runCli(["call", "get-env", "--", s.command, ...s.args], { env });
    assert.equal(bare.code, 0, bare.stderr);
    assert.doesNotMatch(bare.stdout, /TETHER_FIRST_RUN_PRIVATE/);
    assert.match(bare.stdout, /"PATH"/);
    const passed = await runCli(
      ["call", "get-env", "-e", "TETHER_FIRST_RUN_PASSED=yes", "--", s.command, ...s.args],
      {
        env,
      },
    );
    assert.equal(passed.code, 0, passed.stderr);
    assert.match(passed.stdout, /TETHER_FIRST_RUN_PASSED/);
    assert.doesNotMatch(passed.stdout, /TETHER_FIRST_RUN_PRIVATE/);
  });

  test("K1: an image is named with its decoded size, the size -o writes", async () => {
    const s = fleet().stdioServer("everything-stdio");
    const shown = await runCli(["call", "get-tiny-image", "--", s.command, ...s.args]);
    assert.equal(shown.code, 0, shown.stderr);
    const out = join(root, "tiny.png");
    const written = await runCli(["call", "get-tiny-image", "-o", out, "--", s.command, ...s.args]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(shown.stdout, new RegExp(`\\[image image/png ${statSync(out).size} bytes\\]`));
  });
});

/**
 * A 2025-11-25 server whose only tool runs as a task: `working` with a status message for two
 * polls, then completed; in "endless" mode it never ends. Every request is logged.
 */
function taskServer(mode: "ends" | "endless") {
  return startStdioScript(`
let polls = 0;
const task = (status) => ({ taskId: "t-1", status, statusMessage: status === "working" ? "digging" : undefined, createdAt: "2025-01-01T00:00:00Z", ttl: 60000, pollInterval: 200 });
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } }, serverInfo: { name: "t", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "dig", inputSchema: { type: "object" }, execution: { taskSupport: "required" } }] } });
  if (m.method === "tools/call") return send({ jsonrpc: "2.0", id: m.id, result: { task: task("working") } });
  if (m.method === "tasks/get") {
    polls++;
    return send({ jsonrpc: "2.0", id: m.id, result: task(${JSON.stringify(mode)} === "ends" && polls > 2 ? "completed" : "working") });
  }
  if (m.method === "tasks/result") return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "found it" }] } });
  if (m.method === "tasks/cancel") return send({ jsonrpc: "2.0", id: m.id, result: task("cancelled") });
  if (m.id !== undefined && m.method) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
}

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("call --task", () => {
  test("K1: on a terminal the task's status shows on stderr, erased before the result", {
    skip: !hasScript && "no script(1)",
  }, (t) => {
    const server = taskServer("ends");
    t.after(() => server.dispose());
    const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} call dig --task -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
    const out = execFileSync("script", ["-qc", command, "/dev/null"], { encoding: "utf8", timeout: 30_000 });
    assert.match(out, /task working: digging/);
    assert.ok(out.endsWith(`\r${String.fromCharCode(27)}[Kfound it\r\n`), JSON.stringify(out.slice(-80)));
  });

  test("S7: Ctrl-C during a task cancels it on the server (tasks/cancel) and exits 130", async (t) => {
    const server = taskServer("endless");
    t.after(() => server.dispose());
    /** Resolves once the server has been polled: the task exists and the CLI is waiting on it. */
    const polled = new Promise<void>((resolve) => {
      const seen = () => server.log().some((e) => e.event === "recv" && e.message?.method === "tasks/get");
      // The server logs each message it receives to its log file (its second argument).
      const watcher = watch(server.args[1]!, () => {
        if (!seen()) return;
        watcher.close();
        resolve();
      });
      t.after(() => watcher.close());
    });
    const run = await runCli(["call", "dig", "--task", "--", server.command, ...server.args], {
      signalWhen: { signal: "SIGINT", ready: polled },
      timeoutMs: 30_000,
    });
    assert.equal(run.code, 130, run.stderr);
    assert.equal(errorRecord(run).code, "cancelled");
    const methods = server
      .log()
      .flatMap((e) => (e.event === "recv" && e.message?.method ? [e.message.method] : []));
    assert.ok(methods.includes("tasks/cancel"), methods.join(", "));
  });
});

describe("a wide terminal", () => {
  /** 100 characters: far past the 40 a cell was once cut at, well inside 160 columns. */
  const uri = `demo://wide/${"x".repeat(88)}`;
  const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { resources: {} }, serverInfo: { name: "o", version: "1" } } });
  if (m.method === "resources/list") return send({ jsonrpc: "2.0", id: m.id, result: { resources: [{ uri: ${JSON.stringify(uri)}, name: "wide", description: "fits" }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
  after(() => server.dispose());

  test("K1: on a 160-column terminal a 100-character URI is shown whole, ready to paste into read", {
    skip: !hasScript && "no script(1)",
  }, () => {
    const command = `stty cols 160; env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} resources -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
    // The stage line (on stderr while establishing) erases itself; it is not the table.
    const erase = new RegExp(`${String.fromCharCode(27)}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
    const out = execFileSync("script", ["-qc", command, "/dev/null"], { encoding: "utf8", timeout: 20_000 })
      .replace(/\r/g, "")
      .replace(erase, "");
    assert.ok(out.includes(uri), out);
    assert.ok(!out.includes("…"), out);
  });
});
