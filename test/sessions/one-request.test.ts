// `tether call @NAME TOOL ARGS` is one request on the session socket, from one small file: a
// session process of our own here records every frame the command sends. One that does not know
// the one-request call (an older session process) is asked the long way, with the same output.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { CLI_BIN, runCli } from "../helpers/cli.ts";

type Frame = Record<string, unknown>;

/** A session process that knows the one-request call (`tool`), or only the old operations. */
async function fakeDaemon(runtime: string, knowsTool: boolean): Promise<{ frames: Frame[]; close(): void }> {
  const folder = join(runtime, "tether");
  mkdirSync(folder, { mode: 0o700 });
  const frames: Frame[] = [];
  const answer = (f: Frame): Frame[] => {
    const ok = (value: unknown) => [{ id: f.id, ok: value }];
    if (f.op === "tool" && knowsTool)
      return [
        { id: f.id, calling: { callTimeoutMs: 30_000, callMaxBytes: 1_000_000 } },
        { id: f.id, ok: { content: [{ type: "text", text: "one" }] } },
      ];
    if (f.op === "info")
      return ok({
        name: "s",
        target: "fake",
        era: "legacy",
        protocolVersion: "2025-11-25",
        transportMode: "stdio",
        serverCapabilities: { tools: {} },
        attempts: 1,
        startedAt: 0,
        idleMs: 0,
        idleTimeoutMs: 60_000,
        callTimeoutMs: 30_000,
        daemonPid: process.pid,
      });
    if (f.op === "call" && f.method === "listTools")
      return ok([
        { name: "echo", inputSchema: { type: "object", properties: { message: { type: "string" } } } },
      ]);
    if (f.op === "call" && f.method === "callTool") return ok({ content: [{ type: "text", text: "long" }] });
    return [
      {
        id: f.id,
        error: {
          type: "error",
          code: "config",
          reason: "session_protocol",
          stage: "config",
          phase: "discovery",
          message: "unknown session operation",
          attempt: 1,
          observedBytes: null,
          httpStatus: null,
          rpcCode: null,
        },
      },
    ];
  };
  const server: Server = createServer((socket) => {
    let held = "";
    socket.on("error", () => {});
    socket.on("data", (d) => {
      held += d;
      for (let nl = held.indexOf("\n"); nl !== -1; nl = held.indexOf("\n")) {
        const frame = JSON.parse(held.slice(0, nl)) as Frame;
        held = held.slice(nl + 1);
        frames.push(frame);
        for (const a of answer(frame)) socket.write(`${JSON.stringify(a)}\n`);
      }
    });
  });
  const socketPath = join(folder, "sessions.sock");
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  chmodSync(socketPath, 0o600);
  return { frames, close: () => server.close() };
}

/** Runs the CLI recording every module file it resolves; returns the run and our files among them. */
async function recorded(args: string[], runtime: string, dir: string) {
  const log = join(dir, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, "");
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, resolved.url + "\\n");
  return resolved;
}
`,
  );
  const register = join(dir, "register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";
register(${JSON.stringify(pathToFileURL(hooks).href)});
`,
  );
  const run = await runCli(args, {
    env: {
      XDG_RUNTIME_DIR: runtime,
      NODE_OPTIONS: `--import ${pathToFileURL(register).href}`,
      LOADED_LOG: log,
    },
  });
  const dist = pathToFileURL(dirname(CLI_BIN)).href;
  const ours = readFileSync(log, "utf8")
    .split("\n")
    .filter((u) => u.startsWith(dist))
    .map((u) => u.slice(dist.length + 1));
  return { run, ours: [...new Set(ours)] };
}

test("K1: a call on @NAME is one request on the session socket, from the entry and one file", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tether-one-request-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const daemon = await fakeDaemon(runtime, true);
  t.after(() => {
    daemon.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { run, ours } = await recorded(["call", "@s", "echo", "message=hi"], runtime, dir);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "one\n");
  assert.deepEqual(
    daemon.frames.map((f) => f.op),
    ["tool"],
    "one request: the session process lists, checks and calls",
  );
  const [frame] = daemon.frames;
  assert.equal(frame!.session, "s");
  assert.equal(frame!.tool, "echo");
  assert.deepEqual(frame!.args, { message: "hi" });
  assert.deepEqual(frame!.plain, ["message"], "key=value text is the session's to convert");
  assert.deepEqual(
    ours.sort(),
    ["tether-session.mjs", "tether.mjs"],
    "the session call loads two files of ours",
  );
});

test("K1: a session process that does not know the one-request call is asked the long way", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tether-one-request-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const daemon = await fakeDaemon(runtime, false);
  t.after(() => {
    daemon.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = await runCli(["call", "@s", "echo", "message=hi"], { env: { XDG_RUNTIME_DIR: runtime } });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "long\n");
  assert.deepEqual(
    daemon.frames.map((f) => (f.op === "call" ? f.method : f.op)),
    ["tool", "info", "listTools", "callTool"],
  );
});

test("K1: a command line the one-request path does not take goes to the whole CLI, unchanged", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "tether-one-request-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const daemon = await fakeDaemon(runtime, true);
  t.after(() => {
    daemon.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // --debug is the whole CLI's: it attaches, lists and calls, as before.
  const run = await runCli(["call", "@s", "echo", "message=hi", "--call-timeout", "5000", "--debug"], {
    env: { XDG_RUNTIME_DIR: runtime },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "long\n");
  assert.deepEqual(
    daemon.frames.map((f) => (f.op === "call" ? f.method : f.op)),
    ["info", "listTools", "callTool"],
  );
  // A malformed number is refused by the whole CLI's own code, as ever.
  const bad = await runCli(["call", "@s", "echo", "--call-timeout", "5s"], {
    env: { XDG_RUNTIME_DIR: runtime },
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"reason":"invalid_limit"/);
  assert.equal(daemon.frames.length, 3, "nothing more reached the session process");
});
