// How sessions end and what is left behind: idle expiry, a server that dies, a daemon killed
// with SIGKILL (its stale socket is removed, never trusted, and the next start begins afresh),
// and the socket's folder and file modes.
import assert from "node:assert/strict";
import { chownSync, lstatSync, mkdirSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliRun, errorRecord } from "../helpers/cli.ts";
import { gone, reporterFor, sandboxFor, startStateful } from "./sandbox.ts";

function closedRecord(run: CliRun): void {
  assert.equal(run.code, 3, run.stderr);
  const record = errorRecord(run);
  assert.equal(record.code, "connection");
  assert.equal(record.reason, "closed");
  assert.equal(run.stderr.trim().split("\n").length, 1, "exactly one error record");
  assert.equal(run.stdout, "");
}

// Each test has its own sandbox (its own daemon and folders): they run side by side.
describe("session lifetimes", { concurrency: true }, () => {
  test("K1: a session ends after --idle-timeout without use; its daemon and server exit", async (t) => {
    const box = sandboxFor(t);
    const report = await reporterFor(t);
    const info = await startStateful(box, "brief", ["--idle-timeout", "1500"], report.port);
    const serverPid = Number((await report.next(/^started /)).split(" ")[1]);
    box.pids.add(serverPid);
    assert.ok(await gone(info.daemonPid, 15_000), "the daemon exits once its only session expired");
    assert.ok(await gone(serverPid), "the server ends with its session");
    closedRecord(await box.run(["call", "@brief", "echo"]));
  });

  test("K1: a server that dies ends its session: the call reports it, the next command is connection/closed", async (t) => {
    const box = sandboxFor(t);
    const report = await reporterFor(t);
    const info = await startStateful(box, "fragile", [], report.port);
    box.pids.add(Number((await report.next(/^started /)).split(" ")[1]));
    const dying = await box.run(["call", "@fragile", "die"]);
    assert.equal(dying.code, 3, dying.stderr);
    const record = errorRecord(dying);
    assert.equal(record.code, "connection");
    assert.equal(record.effect, "unknown", "the tool may have run");
    closedRecord(await box.run(["call", "@fragile", "echo", "message=x"]));
    assert.ok(await gone(info.daemonPid), "the daemon exits with its last session");
    const list = await box.run(["session", "list", "--json"]);
    assert.deepEqual(JSON.parse(list.stdout), { sessions: [] });
  });

  test("K1: a daemon killed with SIGKILL: the next command reports connection/closed, removes the stale socket, and a new start begins afresh", async (t) => {
    const box = sandboxFor(t);
    const report = await reporterFor(t);
    const first = await startStateful(box, "s", [], report.port);
    const firstServer = Number((await report.next(/^started /)).split(" ")[1]);
    box.pids.add(firstServer);
    assert.equal((await box.run(["call", "@s", "set", "key=a", "value=old"])).code, 0);
    process.kill(first.daemonPid, "SIGKILL");
    assert.ok(await gone(first.daemonPid));
    const socket = join(box.runtime, "tether", "sessions.sock");
    assert.ok(lstatSync(socket).isSocket(), "the dead daemon left its socket behind");
    closedRecord(await box.run(["call", "@s", "get", "key=a"]));
    assert.throws(() => lstatSync(socket), "the stale socket was removed, not trusted");
    // Its server lost its stdin with the daemon and ended on its own.
    assert.ok(await gone(firstServer));

    const second = await startStateful(box, "s", [], report.port);
    box.pids.add(Number((await report.next(/^started /)).split(" ")[1]));
    assert.notEqual(second.daemonPid, first.daemonPid);
    const get = await box.run(["call", "@s", "get", "key=a"]);
    assert.equal(get.stdout.trim(), "(unset)", "a fresh session on a fresh server");
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
  });

  test("K1: the socket's folder is 0700 and the user's, the socket 0600; a wider folder is narrowed", async (t) => {
    const box = sandboxFor(t);
    const folder = join(box.runtime, "tether");
    mkdirSync(folder, { mode: 0o755 });
    const info = await startStateful(box, "s");
    const dir = statSync(folder);
    assert.equal(dir.mode & 0o777, 0o700);
    if (typeof process.getuid === "function") assert.equal(dir.uid, process.getuid());
    const sock = lstatSync(join(folder, "sessions.sock"));
    assert.ok(sock.isSocket());
    assert.equal(sock.mode & 0o777, 0o600);
    assert.equal((await box.run(["session", "stop", "s"])).code, 0);
    assert.ok(await gone(info.daemonPid));
  });

  test("K1: without XDG_RUNTIME_DIR the folder is a 0700 one named for the user in the temp folder", async (t) => {
    const box = sandboxFor(t);
    const tmp = join(box.dir, "tmp");
    mkdirSync(tmp);
    const info = await startStateful(box, "s", [], undefined, { XDG_RUNTIME_DIR: "", TMPDIR: tmp });
    const folder = join(tmp, `tether-${process.getuid?.() ?? "user"}`);
    assert.equal(statSync(folder).mode & 0o777, 0o700);
    assert.ok(lstatSync(join(folder, "sessions.sock")).isSocket());
    assert.equal(
      (await box.run(["session", "stop", "s"], { env: { XDG_RUNTIME_DIR: "", TMPDIR: tmp } })).code,
      0,
    );
    assert.ok(await gone(info.daemonPid));
  });

  test("K1: a session folder that is a link, or someone else's, is refused; nothing is started", async (t) => {
    const box = sandboxFor(t);
    const elsewhere = join(box.dir, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, join(box.runtime, "tether"));
    const linked = await box.run(["session", "start", "s", "--", process.execPath, "-e", "0"]);
    assert.equal(linked.code, 2, linked.stderr);
    assert.equal(errorRecord(linked).reason, "unsafe_session_folder");
    const listed = await box.run(["call", "@s", "echo"]);
    assert.equal(errorRecord(listed).reason, "unsafe_session_folder");
    if (process.getuid?.() === 0) {
      const other = join(box.dir, "other-run");
      mkdirSync(join(other, "tether"), { recursive: true, mode: 0o700 });
      chownSync(join(other, "tether"), 4242, 4242);
      const foreign = await box.run(["session", "start", "s", "--", process.execPath, "-e", "0"], {
        env: { XDG_RUNTIME_DIR: other },
      });
      assert.equal(foreign.code, 2, foreign.stderr);
      assert.equal(errorRecord(foreign).reason, "unsafe_session_folder");
    }
  });
});
