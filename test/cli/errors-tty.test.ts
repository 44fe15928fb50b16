// Errors a person can act on: on a terminal, one readable line and a hint; with --json, or off a
// terminal, the one JSON record. A stdio command that does not exist is named as missing.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** Runs the CLI with stdin, stdout and stderr on a pseudo-terminal; the transcript, CRs dropped. */
function inTerminal(args: string): string {
  const command = `env NO_COLOR=1 ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} ${args}; echo "exit=$?"`;
  const out = execFileSync("script", ["-qc", command, "/dev/null"], { encoding: "utf8", timeout: 20_000 });
  const erase = new RegExp(`${String.fromCharCode(27)}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
  return out.replace(/\r/g, "").replace(erase, "");
}

test("K1: on a terminal an unknown option is one readable line naming it, with the closest one and a hint", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal("tools http://127.0.0.1:9/mcp --jsno");
  assert.match(
    out,
    /^error: unknown option --jsno \(did you mean --json\?\) \[config\/invalid_flag at config, discovery\]\nhint: see tether tools --help\nexit=2\n$/,
  );
});

test("K1: on a terminal a missing stdio command says so and names it; --json keeps the JSON record", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal("tools -- tether-no-such-command-7f3a");
  assert.match(
    out,
    /^error: the server command tether-no-such-command-7f3a was not found .*\[connection\/\w+ at spawn, discovery\]\n/,
  );
  assert.match(out, /exit=3\n$/);
  const json = inTerminal("tools --json -- tether-no-such-command-7f3a");
  const record = JSON.parse(json.split("\n")[0]!) as Record<string, unknown>;
  assert.equal(record.type, "error");
  assert.equal(record.stage, "spawn");
});

test("K1: off a terminal the missing command is the JSON record, its message naming the command", async () => {
  const run = await runCli(["tools", "--", "tether-no-such-command-7f3a"]);
  assert.equal(run.code, 3);
  const record = errorRecord(run);
  assert.equal(record.code, "connection");
  assert.match(String(record.message), /tether-no-such-command-7f3a was not found/);
});

test("K1: on a terminal --debug puts the cause summary in the hint", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal("tools --debug -- tether-no-such-command-7f3a");
  assert.match(out, /\nhint: cause: Error ENOENT: /);
});

test("K1: a --json after -- is the server's: on a terminal tether's own error stays the readable line", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal("tools -- tether-no-such-command-7f3a --json");
  assert.match(out, /^error: /m, "the readable line, not the JSON record");
  assert.doesNotMatch(out, /"type":"error"/);
});

test("K1: a --debug after -- is the server's: tether's record carries no debug causes", async () => {
  const run = await runCli(["tools", "--no-such-flag", "--", "tether-no-such-command-7f3a", "--debug"]);
  assert.equal(run.code, 2);
  const record = errorRecord(run);
  assert.equal(record.code, "config");
  assert.equal(record.debug, undefined);
});
