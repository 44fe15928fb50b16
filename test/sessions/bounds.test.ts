// What bounds a command on @NAME: its own byte ceiling, its own guard when the session process
// stops answering, and the redaction of what `session list` shows.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errorRecord } from "../helpers/cli.ts";
import { gone, STATEFUL, sandboxFor, startStateful } from "./sandbox.ts";

// Each test has its own sandbox (its own daemon and folders): they run side by side.
describe("session bounds", { concurrency: true }, () => {
  test("P4: the command's --call-max-bytes bounds a reply through the session; the session stays up", async (t) => {
    const box = sandboxFor(t);
    await startStateful(box, "s");
    const big = await box.run([
      "call",
      "@s",
      "echo",
      `message=${"x".repeat(4_000)}`,
      "--call-max-bytes",
      "1000",
    ]);
    assert.equal(big.code, 5, big.stderr);
    const record = errorRecord(big);
    assert.equal(record.code, "limit");
    assert.equal(big.stdout, "");
    const small = await box.run(["call", "@s", "echo", "message=fits", "--call-max-bytes", "1000"]);
    assert.equal(small.code, 0, small.stderr);
    assert.equal(small.stdout.trim(), "fits");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });

  test("K1: a session process that stops answering cannot hold a command past its budget", async (t) => {
    // Registered before the sandbox's check, so a stopped daemon is resumed before it is looked for.
    let stopped: number | undefined;
    t.after(() => {
      if (stopped !== undefined) process.kill(stopped, "SIGCONT");
    });
    const box = sandboxFor(t);
    const info = await startStateful(box, "s");
    process.kill(info.daemonPid, "SIGSTOP");
    stopped = info.daemonPid;
    const started = performance.now();
    const stuck = await box.run(["call", "@s", "echo", "message=x", "--call-timeout", "300"], {
      timeoutMs: 30_000,
    });
    assert.equal(stuck.code, 4, stuck.stderr);
    assert.equal(errorRecord(stuck).code, "timeout");
    assert.ok(performance.now() - started < 25_000);
    process.kill(info.daemonPid, "SIGCONT");
    stopped = undefined;
    const after = await box.run(["call", "@s", "echo", "message=back"]);
    assert.equal(after.stdout.trim(), "back");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
    assert.ok(await gone(info.daemonPid));
  });

  test("S4: session list shows the target with every configured secret redacted", async (t) => {
    const box = sandboxFor(t);
    const canary = "canary-secret-4f9a2b7c";
    const start = await box.run([
      "session",
      "start",
      "s",
      "--json",
      "-e",
      `TOKEN=${canary}`,
      "--",
      process.execPath,
      STATEFUL,
      `--token=${canary}`,
    ]);
    assert.equal(start.code, 0, start.stderr);
    box.pids.add((JSON.parse(start.stdout) as { daemonPid: number }).daemonPid);
    assert.ok(!start.stdout.includes(canary));
    for (const json of [true, false]) {
      const list = await box.run(["session", "list", ...(json ? ["--json"] : [])]);
      assert.equal(list.code, 0, list.stderr);
      assert.ok(!list.stdout.includes(canary), "the secret never shows");
      assert.match(list.stdout, /stateful-server\.mjs --token=\[redacted\]/);
    }
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });
});
