// A call's progress, one-shot and on @NAME alike: the status line on a terminal, one `--events`
// line per notification off one (sanitized and redacted), and a budget that ran out while
// progress arrived says that `--progress-timeout` is what helps. Through the built CLI.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { after, describe, type TestContext, test } from "node:test";
import { promisify } from "node:util";
import { CLI_BIN, errorRecord } from "../helpers/cli.ts";
import { startStdioScript } from "../helpers/hostile.ts";
import { type Sandbox, sandboxFor } from "./sandbox.ts";

const SECRET = "progress-secret-4f1e9a";

/**
 * `slow steps=N every=MS`: N progress notifications MS apart, then the answer; `ticking`: progress
 * every 5 ms, never an answer; `silent`: neither. Messages carry a control sequence and the secret
 * the server was given with -e.
 */
const server = startStdioScript(`
const ticks = new Set();
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "p", version: "1" } } });
  if (m.method === "notifications/cancelled") { for (const t of ticks) clearInterval(t); ticks.clear(); return; }
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: [
    { name: "slow", inputSchema: { type: "object", properties: { steps: { type: "integer" }, every: { type: "integer" } }, required: ["steps"] } },
    { name: "ticking", inputSchema: { type: "object" } },
    { name: "silent", inputSchema: { type: "object" } },
  ] } });
  if (m.method === "tools/call") {
    const token = m.params._meta && m.params._meta.progressToken;
    const a = m.params.arguments || {};
    const progress = (step, total) => token !== undefined && send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: step, total, message: "step \\u001b[31m" + (process.env.SECRET || "") } });
    if (m.params.name === "silent") return;
    if (m.params.name === "ticking") {
      let step = 0;
      ticks.add(setInterval(() => progress(++step), 5));
      return;
    }
    let step = 0;
    const tick = setInterval(() => {
      progress(++step, a.steps);
      if (step >= a.steps) {
        clearInterval(tick);
        send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "done" }] } });
      }
    }, a.every || 5);
    ticks.add(tick);
    return;
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());

const serverArgs = ["-e", `SECRET=${SECRET}`, "--", server.command, ...server.args];

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const execFileAsync = promisify(execFile);

/** The CLI with stdin, stdout and stderr on a pseudo-terminal, in the sandbox's folders. */
async function inTerminal(box: Sandbox, args: string[]): Promise<string> {
  const env = Object.entries({ ...box.env, NO_COLOR: "1" }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  const words = [process.execPath, CLI_BIN, ...args].map((w) => JSON.stringify(w));
  const command = `env ${env.join(" ")} ${words.join(" ")}; echo "exit=$?"`;
  const { stdout } = await execFileAsync("script", ["-qfc", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  return stdout;
}

/** Runs `fn` with a session named `p` on the fixture, stopped afterwards (the sandbox checks it went). */
async function withSession(t: TestContext, fn: (box: Sandbox) => Promise<void>): Promise<void> {
  const box = sandboxFor(t);
  const run = await box.run(["session", "start", "p", "--json", "--idle-timeout", "120000", ...serverArgs]);
  assert.equal(run.code, 0, run.stderr);
  box.pids.add((JSON.parse(run.stdout) as { daemonPid: number }).daemonPid);
  try {
    await fn(box);
  } finally {
    await box.run(["session", "stop", "p"]);
  }
}

/** The `--events` lines of type progress, parsed. */
function progressLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((l) => l.includes('"type":"progress"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("progress, one-shot and on @NAME alike", { concurrency: true }, () => {
  test(
    "K1: on a terminal a call on @NAME shows its progress line (never a stage line), erased before the result",
    {
      skip: !hasScript && "no script(1)",
    },
    (t) =>
      withSession(t, async (box) => {
        // 4 × 250 ms: long past the moment a one-shot's stage line would show.
        const out = await inTerminal(box, ["call", "@p", "slow", "steps=4", "every=250"]);
        assert.match(out, /progress 1\/4 step/);
        assert.match(out, /progress 4\/4 step/);
        assert.doesNotMatch(out, /connecting/, "no stage line: a session has no establishment to show");
        assert.ok(!out.includes(SECRET), "the progress line is redacted");
        assert.ok(
          out.includes(`\r${String.fromCharCode(27)}[Kdone\r\n`),
          "the line is erased before the result",
        );
        assert.match(out, /exit=0/);
      }),
  );

  test("K1: --events gives one progress line per notification, one-shot and on @NAME, sanitized and redacted", (t) =>
    withSession(t, async (box) => {
      const [oneShot, named] = await Promise.all([
        box.run(["call", "slow", "steps=3", "--events", ...serverArgs]),
        box.run(["call", "@p", "slow", "steps=3", "--events"]),
      ]);
      for (const run of [oneShot, named]) {
        assert.equal(run.code, 0, run.stderr);
        assert.equal(run.stdout, "done\n");
        const lines = progressLines(run.stderr);
        assert.deepEqual(
          lines.map((l) => [l.progress, l.total]),
          [
            [1, 3],
            [2, 3],
            [3, 3],
          ],
        );
        const tokens = new Set(lines.map((l) => l.progressToken));
        assert.equal(tokens.size, 1, "one call, one token");
        assert.equal(typeof [...tokens][0], "string");
        for (const l of lines)
          assert.deepEqual(Object.keys(l), ["type", "progressToken", "progress", "total", "message"]);
        assert.ok(!run.stderr.includes(SECRET), "the secret the server was given is redacted");
        assert.ok(!run.stderr.includes(String.fromCharCode(27)), "no control sequence reaches stderr");
      }
    }));

  test("K1: without --events nothing but the result is written off a terminal", (t) =>
    withSession(t, async (box) => {
      const run = await box.run(["call", "@p", "slow", "steps=3"]);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "done\n");
      assert.equal(run.stderr, "");
    }));

  test(
    "P4: a call whose budget ran out while progress arrived names --progress-timeout; one without progress does not",
    {
      skip: !hasScript && "no script(1)",
    },
    (t) =>
      withSession(t, async (box) => {
        const cases = await Promise.all([
          inTerminal(box, ["call", "ticking", "--call-timeout", "400", ...serverArgs]),
          inTerminal(box, ["call", "@p", "ticking", "--call-timeout", "400"]),
          inTerminal(box, ["call", "silent", "--call-timeout", "400", ...serverArgs]),
          inTerminal(box, ["call", "@p", "silent", "--call-timeout", "400"]),
        ]);
        for (const out of cases) {
          assert.match(
            out,
            /error: no reply within the 400 ms call budget \[timeout\/deadline_exceeded at call, call\]/,
          );
          assert.match(out, /exit=4/);
        }
        for (const out of cases.slice(0, 2))
          assert.match(out, /hint: progress arrived, .*--progress-timeout MS/);
        for (const out of cases.slice(2))
          assert.match(
            out,
            /hint: raise the budget with --timeout MS \(or --discovery-timeout, --call-timeout\)/,
          );
        // Off a terminal the record is today's: the fact is the hint's, never a field of the record.
        const piped = await box.run(["call", "@p", "ticking", "--call-timeout", "400"]);
        assert.equal(piped.code, 4);
        assert.deepEqual(Object.keys(errorRecord(piped)).sort(), [
          "attempt",
          "attempts",
          "code",
          "effect",
          "httpStatus",
          "limits",
          "message",
          "observedBytes",
          "phase",
          "reason",
          "rpcCode",
          "stage",
          "type",
        ]);
      }),
  );
});

test("K1: arguments that do not fit are refused on @NAME (checked by the session process) with the one-shot's record", (t) =>
  withSession(t, async (box) => {
    const cases = [
      ["slo", "steps=1"],
      ["slow", "steps=1", "stpes=2"],
      ["slow", "steps=x"],
      ["slow", "every=5"],
      ["slow", '{"steps":1,"more":2}'],
    ];
    for (const words of cases) {
      const [named, oneShot] = await Promise.all([
        box.run(["call", "@p", ...words]),
        box.run(["call", ...words, ...serverArgs]),
      ]);
      assert.equal(named.code, 2, named.stderr);
      assert.equal(named.stdout, "");
      assert.equal(named.stderr, oneShot.stderr, `the same record for ${words.join(" ")}`);
      assert.equal(named.code, oneShot.code);
      assert.equal(errorRecord(named).code, "config");
    }
  }));

test(
  "K1: on a terminal, an argument error on @NAME names the command that shows the tool's schema, as one-shot does",
  { skip: !hasScript && "no script(1)" },
  (t) =>
    withSession(t, async (box) => {
      const [named, oneShot] = await Promise.all([
        inTerminal(box, ["call", "@p", "slow", "stpes=2"]),
        inTerminal(box, ["call", "slow", "stpes=2", ...serverArgs]),
      ]);
      assert.match(named, /hint: tether tool @p slow shows its schema/);
      assert.match(oneShot, /hint: tether tool slow .*shows its schema/);
      assert.match(named, /exit=2/);
    }),
);
