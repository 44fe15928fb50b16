// `tether watch` shows progress the server reports on its own (work it started, a task), as a
// line or an NDJSON record, beside the other notifications.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { runCli } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";

/** Reports progress for work of its own once the level is set: with and without a total, hostile text included. */
const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { logging: {} }, serverInfo: { name: "w", version: "1" } } });
  if (m.method === "logging/setLevel") {
    send({ jsonrpc: "2.0", id: m.id, result: {} });
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "import-1", progress: 3, total: 10, message: "copying \\u001b[2Jfiles" } });
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 7, progress: 0.5 } });
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: {}, progress: 1 } });
    return send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "after progress" } });
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());
const stdio = () => ["--", server.command, ...server.args];

// Each test runs its own CLI process, which starts its own server process: side by side.
describe("watch progress", { concurrency: true }, () => {
  test("M2: watch --json prints the server's own progress as NDJSON records", async () => {
    const run = await runCli(["watch", "--log-level", "info", "--duration", "1500", "--json", ...stdio()]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.filter((l) => l.type === "progress"),
      [
        {
          type: "progress",
          progressToken: "import-1",
          progress: 3,
          total: 10,
          message: "copying \u001b[2Jfiles",
        },
        { type: "progress", progressToken: 7, progress: 0.5 },
      ],
      "a notification without a usable token is not shown",
    );
    // The log message the server sent after the progress arrived too: the malformed one ended nothing.
    assert.ok(lines.some((l) => l.type === "log" && l.data === "after progress"));
  });

  test("S1: watch prints progress as readable lines, the server's text sanitized", async () => {
    const run = await runCli(["watch", "--log-level", "info", "--duration", "1500", ...stdio()]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^progress import-1: 3\/10 copying \\x1b\[2Jfiles$/m);
    assert.match(run.stdout, /^progress 7: 0\.5$/m);
    assert.match(run.stdout, /^log info: after progress$/m);
  });
});
