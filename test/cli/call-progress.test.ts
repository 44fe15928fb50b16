// `call --progress-timeout`: each progress notification restarts the call clock, --call-timeout
// bounds the whole; a progress line on a terminal only; `call --task` runs a task to its result.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { after, describe, test } from "node:test";
import { promisify } from "node:util";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { startStdioScript } from "../helpers/hostile.ts";

/** A tool that reports progress five times, 300 ms apart, and then answers (1.5 s in all). */
const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "p", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "slow", inputSchema: { type: "object" } }] } });
  if (m.method === "tools/call") {
    const token = m.params._meta && m.params._meta.progressToken;
    let step = 0;
    const tick = setInterval(() => {
      step++;
      if (token !== undefined) send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: step, total: 5, message: "working" } });
      if (step === 5) {
        clearInterval(tick);
        send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "done" }] } });
      }
    }, 300);
    return;
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());
const execFileAsync = promisify(execFile);
const stdio = () => ["--", server.command, ...server.args];

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

// The three calls are independent CLI runs, each with its own server process: they run side by side.
describe("long calls", { concurrency: true }, () => {
  const fleet = useFleet(["everything-stdio"]);

  test("P4: --progress-timeout lets a call that keeps reporting progress outlive it; --call-timeout alone does not", async () => {
    const [kept, cut] = await Promise.all([
      runCli(["call", "slow", "--progress-timeout", "1000", "--call-timeout", "10000", ...stdio()]),
      runCli(["call", "slow", "--call-timeout", "1000", ...stdio()]),
    ]);
    assert.equal(kept.code, 0, kept.stderr);
    assert.equal(kept.stdout, "done\n");
    assert.equal(kept.stderr, "", "no progress line off a terminal");
    assert.equal(cut.code, 4, cut.stderr);
    assert.equal(errorRecord(cut).code, "timeout");
  });

  test("K1: on a terminal a progress line shows on stderr and is erased before the result", {
    skip: !hasScript && "no script(1)",
  }, async () => {
    const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} call slow --progress-timeout 1000 -- ${JSON.stringify(server.command)} ${server.args.map((a) => JSON.stringify(a)).join(" ")}`;
    // Asynchronous, so the other calls of this suite run meanwhile.
    const { stdout: out } = await execFileAsync("script", ["-qc", command, "/dev/null"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.match(out, /progress 1\/5 working/);
    assert.ok(out.endsWith(`\r${String.fromCharCode(27)}[Kdone\r\n`), "the line is erased before the result");
  });

  test("K1: call --task runs server-everything's task-only tool to its result", async () => {
    const s = fleet().stdioServer("everything-stdio");
    const run = await runCli(
      ["call", "simulate-research-query", "topic=tides", "--task", "--json", "--", s.command, ...s.args],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { content: { text?: string }[] };
    assert.ok(result.content.some((c) => typeof c.text === "string" && c.text.includes("tides")));
  });
});
