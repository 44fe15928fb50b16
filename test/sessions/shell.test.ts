// `tether shell`: one connection, many commands typed (here piped) at a prompt; failures print
// their record and the shell goes on; server notifications print between commands.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { afterEach, test } from "node:test";
import { completeLine } from "../../src/cli/shell.ts";
import type { Tool } from "../../src/client/results.ts";
import { CLI_BIN } from "../helpers/cli.ts";
import { gone, type Reporter, reporter, type Sandbox, STATEFUL, sandbox, startStateful } from "./sandbox.ts";

let box: Sandbox | undefined;
let report: Reporter | undefined;
afterEach(async () => {
  report?.close();
  report = undefined;
  const left = (await box?.cleanup()) ?? [];
  box = undefined;
  assert.deepEqual(left, [], "a daemon or server was still running when the test ended");
});

/** Runs `tether shell ARGS` with `lines` on its stdin. */
function shell(
  b: Sandbox,
  args: string[],
  lines: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, "shell", ...args], {
      env: { ...process.env, NO_COLOR: "1", ...b.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const killer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("the shell did not end"));
    }, 30_000);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(`${lines.join("\n")}\n`);
  });
}

test("K1: a shell on @NAME runs many commands on the session; a failing line prints one record and the shell goes on", async () => {
  box = sandbox();
  const info = await startStateful(box, "s");
  const r = await shell(
    box,
    ["@s"],
    [
      "tools",
      "call set key=a value='two words'",
      "call get key=a",
      "call nosuch",
      "call announce text=hello-from-server",
      "help",
      "exit",
    ],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /set\(key: string, value: string\)/);
  assert.match(r.stdout, /^ok$/m);
  assert.match(r.stdout, /^two words$/m);
  assert.match(r.stdout, /log info: hello-from-server/, "a server notification is printed");
  assert.match(r.stdout, /commands:/);
  const records = r.stderr
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(records.length, 1);
  assert.equal(records[0]!.code, "config");
  // The shell's link ended; the session did not.
  const get = await box.run(["call", "@s", "get", "key=a"]);
  assert.equal(get.stdout.trim(), "two words");
  assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  assert.ok(await gone(info.daemonPid));
});

test("K1: a shell on a stdio target keeps one server for every line, and ends it at end of input", async () => {
  box = sandbox();
  report = await reporter();
  const r = await shell(
    box,
    ["-e", `REPORT_PORT=${report.port}`, "--", process.execPath, STATEFUL],
    ["call set key=k value=1", "call get key=k", "call pid"],
  );
  assert.equal(r.code, 0, r.stderr);
  const started = report.lines.filter((l) => l.startsWith("started "));
  assert.equal(started.length, 1, "one server for the whole shell");
  const pid = Number(started[0]!.split(" ")[1]);
  box.pids.add(pid);
  assert.deepEqual(r.stdout.trim().split("\n"), ["ok", "1", String(pid)]);
});

test("K1: Tab completes commands, tool names, and the argument names a tool's schema declares", () => {
  const tools = [
    { name: "set", inputSchema: { type: "object", properties: { key: {}, value: {} } } },
    { name: "search", inputSchema: { type: "object", properties: { query: {} } } },
  ] as unknown as Tool[];
  assert.deepEqual(completeLine("ca", tools), [["call"], "ca"]);
  assert.deepEqual(completeLine("call s", tools), [["set", "search"], "s"]);
  assert.deepEqual(completeLine("call se", tools), [["set", "search"], "se"]);
  assert.deepEqual(completeLine("call set ", tools), [["key=", "value="], ""]);
  assert.deepEqual(completeLine("call set key=a ", tools), [["value="], ""]);
  assert.deepEqual(completeLine("watch d", tools), [["debug"], "d"]);
  assert.deepEqual(completeLine("", tools)[0].includes("tools"), true);
});

test("S7: at a terminal, Ctrl-C cancels the running line on the server and the prompt comes back; history is kept", async () => {
  box = sandbox();
  report = await reporter();
  const { PassThrough } = await import("node:stream");
  const { readFileSync, statSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { connect } = await import("../../src/connect/connect.ts");
  const { runShell } = await import("../../src/cli/shell.ts");
  const { Redactor } = await import("../../src/errors/redact.ts");
  const client = await connect({
    command: process.execPath,
    args: [STATEFUL],
    env: { REPORT_PORT: String(report.port) },
  });
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
  let shown = "";
  output.on("data", (d) => {
    shown += d;
  });
  let errors = "";
  const until = async (match: RegExp) => {
    while (!match.test(shown + errors)) await new Promise((resolve) => output.once("data", resolve));
  };
  const stateHome = join(box.dir, "state");
  const done = runShell(client, {
    io: {
      stdout: () => {},
      stderr: (t) => {
        errors += t;
        output.write("");
      },
      env: { TETHER_STATE_DIR: stateHome },
      isTty: true,
    },
    redactor: new Redactor([]),
    style: { color: false, columns: 100 },
    json: false,
    input,
    output,
  });
  try {
    await until(/tether> /);
    input.write("call slow\r");
    const id = (await report.next(/^call slow /)).split(" ")[2];
    input.write("\x03");
    assert.equal(await report.next(/^cancelled /), `cancelled ${id}`);
    await until(/cancelled/);
    input.write("call echo message=after\r");
    await until(/after/);
    input.write("exit\r");
    assert.equal(await done, 0);
  } finally {
    await client.close();
  }
  const history = join(stateHome, "shell_history");
  assert.deepEqual(readFileSync(history, "utf8").trim().split("\n"), [
    "call slow",
    "call echo message=after",
    "exit",
  ]);
  assert.equal(statSync(history).mode & 0o777, 0o600);
});
