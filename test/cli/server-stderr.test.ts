// A stdio server that dies as it starts says why: the end of its stderr, sanitized and redacted,
// on the terminal line and in the JSON record (one bounded field, `stderrTail`), and in the
// library's error; and it is started once, not again for another era.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { connect } from "../../src/connect/connect.ts";
import { TetherError } from "../../src/errors/tether-error.ts";
import { errorRecord, hasScript, inTerminal, runCli } from "../helpers/cli.ts";

const SERVER = fileURLToPath(new URL("../fixtures/dies-at-start/server.mjs", import.meta.url));
const CANARY = "canary-0f5e-secret-9d2c";
const dir = mkdtempSync(join(tmpdir(), "tether-dies-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
/** A fresh file for one run's count of starts. */
function startsFile(): string {
  return join(dir, `starts-${++runs}`);
}
const starts = (file: string) => readFileSync(file, "utf8").trim().split("\n").length;

const ESC = String.fromCharCode(27);

test("K1/S1/S4: off a terminal the record carries the server's last stderr lines, bounded, redacted, sanitized", async () => {
  const file = startsFile();
  const run = await runCli(["tools", "-e", `TETHER_CANARY=${CANARY}`, "--", process.execPath, SERVER, file]);
  assert.equal(run.code, 3, run.stderr);
  assert.equal(run.stderr.trim().split("\n").length, 1, "one line: the record");
  const record = errorRecord(run);
  assert.equal(record.code, "connection");
  assert.equal(record.message, "the server exited with status 3 before it answered");
  const tail = String(record.stderrTail);
  const lines = tail.split("\n");
  assert.ok(lines.length <= 20, `at most 20 lines, got ${lines.length}`);
  assert.ok(Buffer.byteLength(tail) <= 2048, "at most 2 KiB");
  assert.match(lines.at(-1)!, /line 50 of its start-up log$/, "the last line is the server's last");
  assert.doesNotMatch(tail, /line 29 /, "only the end is kept");
  assert.match(tail, /line 44 connecting with key \[redacted\] failed/);
  assert.ok(!run.stderr.includes(CANARY), "the -e secret is redacted");
  assert.match(tail, /line 48 see \[url\]/, "URLs go, as in every message");
  assert.match(tail, /\nError: dies-at-start failed to read its config\n\[stack frames left out\]\n/);
  assert.doesNotMatch(tail, /config\.js|index\.js/, "no stack frame");
  assert.match(tail, /line 46 \\x1b\]0;owned title\\x07\\x1b\[31mred\\x1b\[0m \\x9b2J bell\\x07/);
  assert.ok(!tail.includes(ESC) && !tail.includes("\u009b") && !tail.includes("\u0007"), "no raw control");
  assert.ok(Buffer.byteLength(run.stderr) <= 4096, `the record stays within 4 KiB (${run.stderr.length})`);
  assert.equal(starts(file), 1, "a server that died before answering is started once");
});

test("K1: a server that died before answering is started once, with --server-stderr too", async () => {
  const file = startsFile();
  const run = await runCli(["tools", "--server-stderr", "--", process.execPath, SERVER, file]);
  assert.equal(run.code, 3);
  assert.equal(starts(file), 1);
  const words = run.stderr.split("\n").filter((l) => l.includes("line 50 of its start-up log"));
  assert.equal(words.length, 1, "its own words pass through once");
  assert.equal(errorRecord(run).stderrTail, undefined, "passed through, so not kept");
});

test("K1/S1/S4: on a terminal the error line is followed by the server's last lines; no hint promises --debug", {
  skip: !hasScript && "no script(1)",
}, () => {
  for (const debug of [[], ["--debug"]]) {
    const file = startsFile();
    const out = inTerminal([
      "tools",
      ...debug,
      "-e",
      `TETHER_CANARY=${CANARY}`,
      "--",
      process.execPath,
      SERVER,
      file,
    ]);
    assert.match(
      out,
      /^error: the server exited with status 3 before it answered \[connection\/closed at probe, discovery\]\n/,
    );
    assert.match(out, /\n {2}\| dies-at-start: line 50 of its start-up log\nhint: /);
    assert.match(out, /\n {2}\| dies-at-start: line 44 connecting with key \[redacted\] failed\n/);
    assert.ok(!out.includes(CANARY));
    assert.ok(!out.includes(ESC) && !out.includes("\u0007"), "no raw escape from the server");
    const hint = out.split("\n").find((l) => l.startsWith("hint: ")) ?? "";
    assert.doesNotMatch(hint, /--debug/, `${debug.join("")}: ${hint}`);
    assert.doesNotMatch(hint, /exited with status/, "--debug does not repeat the message");
    assert.match(out, /exit=3\n$/);
    assert.equal(starts(file), 1);
  }
});

test("K1: the library's error carries the tail as stderrTail", async () => {
  const file = startsFile();
  const error = await connect({
    command: process.execPath,
    args: [SERVER, file],
    env: { TETHER_CANARY: CANARY },
  }).then(
    () => assert.fail("connected to a dead server"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof TetherError);
  assert.equal(error.code, "connection");
  assert.equal(error.failedAtStart, true);
  assert.match(error.stderrTail ?? "", /line 50 of its start-up log$/);
  assert.ok(!(error.stderrTail ?? "").includes(CANARY));
  assert.equal(error.toJSON().stderrTail, error.stderrTail);
  assert.equal(starts(file), 1);
});

test("N6 (control): a server that exits with status 0 before answering is legacy evidence: started again", async () => {
  const file = startsFile();
  const run = await runCli(["tools", "--", process.execPath, SERVER, file, "0"]);
  assert.equal(run.code, 3);
  assert.equal(starts(file), 2, "the probed process, then one fresh process for initialize");
  assert.match(String(errorRecord(run).stderrTail), /line 50/, "the fresh one's words");
});

const EVERYTHING = fileURLToPath(new URL("../../node_modules/.bin/mcp-server-everything", import.meta.url));

test("K1: server-everything given a bogus transport says why, once: its usage text in the record, not twice on stderr", {
  skip: !existsSync(EVERYTHING) && "no server-everything",
}, async () => {
  const run = await runCli(["tools", "--", EVERYTHING, "bogus"]);
  assert.equal(run.code, 3);
  const record = errorRecord(run);
  assert.match(String(record.message), /^the server exited with status \d+ before it answered$/);
  assert.match(String(record.stderrTail), /Unknown transport: bogus/);
  const passed = await runCli(["tools", "--server-stderr", "--", EVERYTHING, "bogus"]);
  assert.equal(passed.code, 3);
  assert.equal(passed.stderr.split("Unknown transport: bogus").length - 1, 1, "started once");
});

test("N7: a server remembered as legacy that now dies while starting is started once: its death disproves nothing", async () => {
  const file = startsFile();
  const broken = join(dir, `broken-${runs}`);
  const env = { TETHER_CACHE_DIR: join(dir, `cache-${runs}`) };
  const args = ["tools", "-e", `TETHER_DIE_IF=${broken}`, "--", process.execPath, SERVER, file];
  const working = await runCli(args, { env });
  assert.equal(working.code, 0, working.stderr);
  assert.equal(starts(file), 1);
  writeFileSync(broken, "");
  const run = await runCli(args, { env });
  assert.equal(run.code, 3);
  assert.equal(errorRecord(run).message, "the server exited with status 3 before it answered");
  assert.equal(starts(file), 2, "one more start: the remembered era is not dropped to start it again");
});
