// Sessions that outlive a command, end to end: the built CLI starts a session on a stdio server
// that keeps state, then separate `tether` processes use it as @NAME. Every test has its own
// runtime and home folders (its own daemon) and proves no daemon or server is left running.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errorRecord } from "../helpers/cli.ts";
import { gone, reporterFor, type Sandbox, sandboxFor, startStateful } from "./sandbox.ts";

/** The server's pid, asked of the session itself. */
async function serverPid(b: Sandbox, name: string): Promise<number> {
  const r = await b.run(["call", `@${name}`, "pid"]);
  assert.equal(r.code, 0, r.stderr);
  return Number(r.stdout.trim());
}

// Each test has its own sandbox (its own daemon and folders): they run side by side.
describe("sessions", { concurrency: true }, () => {
  test("K1: a session keeps its server's state across twenty commands, then stops, and its daemon exits", async (t) => {
    const box = sandboxFor(t);
    const info = await startStateful(box, "work");
    assert.equal(info.era, "legacy");
    assert.equal(info.protocolVersion, "2025-06-18");
    assert.equal(info.transportMode, "stdio");
    const pid = await serverPid(box, "work");
    box.pids.add(pid);
    for (let i = 0; i < 10; i++) {
      const set = await box.run(["call", "@work", "set", "key=k", `value=v${i}`]);
      assert.equal(set.code, 0, set.stderr);
      const get = await box.run(["call", "@work", "get", "key=k"]);
      assert.equal(get.code, 0, get.stderr);
      assert.equal(get.stdout.trim(), `v${i}`, "a value set by one command is read by the next");
      assert.equal(get.stderr, "");
    }

    const list = await box.run(["session", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    const { sessions } = JSON.parse(list.stdout) as { sessions: Record<string, unknown>[] };
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]!.name, "work");
    assert.match(String(sessions[0]!.target), /^-- .*stateful-server\.mjs$/);
    for (const key of ["era", "protocolVersion", "transportMode", "startedAt", "idleMs"])
      assert.ok(key in sessions[0]!, key);

    const stop = await box.run(["session", "stop", "work"]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.ok(await gone(info.daemonPid), "the daemon exits with its last session");
    assert.ok(await gone(pid), "the server ends with its session");
    const after = await box.run(["call", "@work", "get", "key=k"]);
    assert.equal(after.code, 3);
    const record = errorRecord(after);
    assert.equal(record.code, "connection");
    assert.equal(record.reason, "closed");
    assert.equal(after.stderr.trim().split("\n").length, 1, "exactly one error record");
    assert.equal(after.stdout, "");
  });

  test("K1: every command takes @NAME: tools, call, list and read paths, with --json", async (t) => {
    const box = sandboxFor(t);
    await startStateful(box, "s");
    const tools = await box.run(["tools", "@s", "--json"]);
    assert.equal(tools.code, 0, tools.stderr);
    assert.deepEqual(
      (JSON.parse(tools.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
      ["set", "get", "echo", "slow", "die", "pid", "announce"],
    );
    const call = await box.run(["call", "@s", "echo", "message=hello", "--json"]);
    assert.equal(call.code, 0, call.stderr);
    assert.deepEqual(JSON.parse(call.stdout).content, [{ type: "text", text: "hello" }]);
    // Schema-guided arguments work through a session as without one.
    const unknown = await box.run(["call", "@s", "ech", "message=x"]);
    assert.equal(unknown.code, 2);
    assert.equal(errorRecord(unknown).code, "config");
    // A server without resources answers with its JSON-RPC error, as one record.
    const resources = await box.run(["resources", "@s"]);
    assert.equal(resources.code, 7);
    assert.equal(errorRecord(resources).code, "remote_error");
    const stop = await box.run(["session", "stop", "@s"]);
    assert.equal(stop.code, 0, stop.stderr);
  });

  test("K1: a connection option on @NAME is refused; an unknown session is connection/closed", async (t) => {
    const box = sandboxFor(t);
    const none = await box.run(["call", "@nobody", "echo"]);
    assert.equal(none.code, 3);
    assert.equal(errorRecord(none).reason, "closed");
    await startStateful(box, "s");
    const pinned = await box.run(["tools", "@s", "--protocol-version", "2025-06-18"]);
    assert.equal(pinned.code, 2);
    assert.equal(errorRecord(pinned).reason, "inapplicable_flag");
    const twice = await box.run(["session", "start", "s", "--", process.execPath, "-e", "0"]);
    assert.equal(twice.code, 2);
    assert.equal(errorRecord(twice).reason, "session_exists");
    const other = await box.run(["call", "@other", "echo"]);
    assert.equal(other.code, 3);
    assert.equal(errorRecord(other).code, "connection");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });

  test("P4: two commands on one session at once both work; Ctrl-C cancels a call on the server and leaves the session up (S7)", async (t) => {
    const box = sandboxFor(t);
    const report = await reporterFor(t);
    await startStateful(box, "s", [], report.port);
    await report.next(/^started /);
    const set = await box.run(["call", "@s", "set", "key=a", "value=kept"]);
    assert.equal(set.code, 0, set.stderr);

    const slowCalled = report.next(/^call slow /);
    let besideDone!: () => void;
    const afterBeside = new Promise<void>((resolve) => {
      besideDone = resolve;
    });
    const slow = box.run(["call", "@s", "slow"], { signalWhen: { signal: "SIGINT", ready: afterBeside } });
    await slowCalled;
    // While the slow call is in flight, another command on the same session completes.
    const beside = await box.run(["call", "@s", "echo", "message=beside"]);
    besideDone();
    assert.equal(beside.code, 0, beside.stderr);
    assert.equal(beside.stdout.trim(), "beside");

    const interrupted = await slow;
    assert.equal(interrupted.code, 130, interrupted.stderr);
    const record = errorRecord(interrupted);
    assert.equal(record.code, "cancelled");
    assert.equal(interrupted.stderr.trim().split("\n").length, 1, "exactly one error record");
    const id = (await slowCalled).split(" ")[2];
    assert.equal(
      await report.next(/^cancelled /),
      `cancelled ${id}`,
      "the server was told to cancel that request",
    );

    const get = await box.run(["call", "@s", "get", "key=a"]);
    assert.equal(get.code, 0, get.stderr);
    assert.equal(get.stdout.trim(), "kept", "the session and its state survive the Ctrl-C");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });

  test("P4: the command's --call-timeout bounds a forwarded call; the session stays up", async (t) => {
    const box = sandboxFor(t);
    const report = await reporterFor(t);
    await startStateful(box, "s", [], report.port);
    const started = performance.now();
    const slow = await box.run(["call", "@s", "slow", "--call-timeout", "300"]);
    assert.equal(slow.code, 4, slow.stderr);
    const record = errorRecord(slow);
    assert.equal(record.code, "timeout");
    assert.equal(record.effect, "unknown");
    assert.deepEqual(record.limits, { timeoutMs: 300 });
    assert.ok(performance.now() - started < 10_000);
    await report.next(/^cancelled /);
    const echo = await box.run(["call", "@s", "echo", "message=still"]);
    assert.equal(echo.stdout.trim(), "still");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });
});
