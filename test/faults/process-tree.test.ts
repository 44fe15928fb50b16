// A stdio server's whole process tree is ours to end (CONTRACT S6, with C5, C9, E4, K1): the
// server below starts a helper, which starts a great-grandchild that ignores SIGTERM, all with
// their own stdio, so the end of our pipe tells them nothing. Every way a connection ends
// (close(), an expired establishment deadline, the server's own death, the host exiting, the CLI
// on SIGINT or SIGTERM) must leave no member of the server's process group running.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLEANUP_GRACE_MS, connect, SIGTERM_GRACE_MS, TetherError } from "../../src/index.ts";
import { LIBRARY_URL, runChildToExit } from "../helpers/child-exit.ts";
import { until } from "../helpers/fake-clock.ts";
import { type CliExit, groupMembers, killQuietly, running, startCli } from "../helpers/process-tree.ts";

const SERVER = fileURLToPath(new URL("../fixtures/process-tree/tree-server.mjs", import.meta.url));
const VERSION = "2025-06-18";
/** Room for a machine several times slower than idle; the bounds themselves are the named graces. */
const SLACK_MS = 2_500;

interface Tree {
  server: number;
  helper: number;
  stubborn: number;
}

const dirs: string[] = [];
const trees: Tree[] = [];
after(() => {
  // Whatever a failed test left behind goes, so one failure does not leak into the machine.
  for (const t of trees) {
    killQuietly(t.server, true);
    for (const pid of [t.server, t.helper, t.stubborn]) killQuietly(pid);
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh report file and the command line that starts the tree server with it. */
function fixture(mode: "serve" | "hang") {
  const dir = mkdtempSync(join(tmpdir(), "tether-tree-"));
  dirs.push(dir);
  const reportFile = join(dir, "report.jsonl");
  writeFileSync(reportFile, "");
  const entries = (): Record<string, unknown>[] =>
    readFileSync(reportFile, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const has = (event: string) => entries().some((e) => e.event === event);
  return {
    dir,
    command: process.execPath,
    args: [SERVER, "server", reportFile, mode],
    has,
    /** The tree's pids, once every member reported in (after `tree_ready`). */
    tree(): Tree {
      const pid = (role: string) => entries().find((e) => e.role === role)?.pid as number;
      const t = { server: pid("server"), helper: pid("helper"), stubborn: pid("stubborn") };
      trees.push(t);
      return t;
    },
  };
}

/** Nothing of the tree runs: no member of the server's group, and none of its known pids. */
function leftovers(t: Tree): number[] {
  const live = new Set(groupMembers(t.server));
  for (const pid of [t.server, t.helper, t.stubborn]) if (running(pid)) live.add(pid);
  return [...live];
}

function assertTreeGone(t: Tree, when: string): void {
  assert.deepEqual(leftovers(t), [], `no member of the server's process group runs ${when}`);
}

function assertTreeUp(t: Tree): void {
  for (const [role, pid] of Object.entries(t)) assert.ok(running(pid), `the ${role} (${pid}) runs`);
  assert.equal(groupMembers(t.server).length, 3, "the three processes share the server's process group");
}

const base = { eraHints: false, protocolVersion: VERSION, timeoutMs: 10_000 } as const;

/** A host program that connects to the fixture's server with `base`, lists its tools, then runs `ending`. */
function hostScript(f: { command: string; args: readonly string[] }, ending: string): string {
  return `
import { connect } from ${JSON.stringify(LIBRARY_URL)};
const client = await connect(${JSON.stringify({ ...base, command: f.command, args: f.args })});
await client.listTools();
${ending}
`;
}

// Every test starts its own tree (and client, script or CLI process): the tests run side by side.
describe("S6: process trees", { concurrency: true }, () => {
  describe("S6: the library ends a stdio server's whole process tree", { concurrency: true }, () => {
    test("S6 C5: close() ends the server, its helper and a great-grandchild that ignores SIGTERM", async () => {
      const f = fixture("serve");
      const client = await connect({ ...base, command: f.command, args: f.args });
      const t = f.tree();
      assertTreeUp(t);
      const started = performance.now();
      await client.close();
      const ms = performance.now() - started;
      assertTreeGone(t, "once close() resolved");
      // The server leaves on its stdin's end; the helpers get SIGTERM, the stubborn one SIGKILL.
      assert.ok(ms <= CLEANUP_GRACE_MS + SLACK_MS, `close() took ${Math.round(ms)} ms`);
      assert.ok(
        ms >= SIGTERM_GRACE_MS - 50,
        `the SIGTERM grace was given before SIGKILL (${Math.round(ms)} ms)`,
      );
    });

    test("S6 E4: an expired establishment deadline ends the whole tree within the cleanup grace", async () => {
      const f = fixture("hang");
      const deadlineMs = 2_000;
      const started = performance.now();
      const outcome = connect({
        eraHints: false,
        protocolVersion: VERSION,
        timeoutMs: deadlineMs,
        command: f.command,
        args: f.args,
      }).then(
        () => assert.fail("connect() resolved against a server that never answers"),
        (e: unknown) => e,
      );
      await until(() => f.has("tree_ready"), deadlineMs, "the tree to be up before the deadline");
      const t = f.tree();
      const error = await outcome;
      const ms = performance.now() - started;
      assert.ok(TetherError.is(error), String(error));
      assert.equal(error.code, "timeout");
      assertTreeGone(t, "once connect() settled");
      assert.ok(
        ms <= deadlineMs + CLEANUP_GRACE_MS + SLACK_MS,
        `connect() settled after ${Math.round(ms)} ms`,
      );
    });

    test("S6: when the server dies by itself, its orphaned helpers are ended without a close()", async () => {
      const f = fixture("serve");
      const client = await connect({ ...base, command: f.command, args: f.args });
      const t = f.tree();
      assertTreeUp(t);
      await assert.rejects(
        client.callTool("die"),
        (e: unknown) => TetherError.is(e) && e.code === "connection",
      );
      // Nobody calls close(): the lost channel alone must end what the server left behind.
      await until(
        () => leftovers(t).length === 0,
        CLEANUP_GRACE_MS + SLACK_MS,
        "the orphaned helpers to be ended",
      );
      await client.close();
      assertTreeGone(t, "after close()");
    });

    test("S6 C9: a script that connects and exits without close() leaves no helper running", async () => {
      const f = fixture("serve");
      const run = await runChildToExit({ source: hostScript(f, "process.exit(0);"), exitWithinMs: 15_000 });
      assert.equal(run.code, 0, run.stderr);
      const t = f.tree();
      // The library sends SIGKILL to the tree as the host exits; the kernel ends the members when
      // they next run, which on a busy machine may be a moment after the host is gone. A tree
      // that was never sent the signal stays up past the bound.
      await until(() => leftovers(t).length === 0, 1_000, "the tree to be gone once the host process exited");
      assertTreeGone(t, "once the host process exited");
    });

    test("S6 C9: a script that connects, calls and closes exits by itself and leaves no helper", async () => {
      const f = fixture("serve");
      const run = await runChildToExit({
        source: hostScript(f, "await client.close();"),
        exitWithinMs: 15_000,
      });
      assert.equal(run.code, 0, run.stderr);
      assertTreeGone(f.tree(), "once the script exited by itself");
    });
  });

  /** Starts the built CLI on `tether call hold` against a tree server; resolves once the server has the call. */
  async function cliDuringCall() {
    const f = fixture("serve");
    const cli = startCli(["call", "hold", "--protocol-version", VERSION, "--", f.command, ...f.args], {
      env: { TETHER_CACHE_DIR: f.dir },
    });
    const exitedEarly = cli.exited.then((r) => {
      throw new Error(`the CLI exited before the call arrived: ${r.code} ${r.stderr}`);
    });
    exitedEarly.catch(() => {});
    await Promise.race([until(() => f.has("call"), 15_000, "the server to receive the call"), exitedEarly]);
    const t = f.tree();
    assertTreeUp(t);
    return { cli, t };
  }

  function assertOneCancelledRecord(run: CliExit): void {
    assert.equal(run.code, 130, run.stderr);
    assert.equal(run.stdout, "", "nothing on stdout");
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 1, `exactly one line on stderr: ${run.stderr}`);
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(record.type, "error");
    assert.equal(record.code, "cancelled");
  }

  describe("S6 K1: the CLI ends the server's tree on SIGINT and SIGTERM", { concurrency: true }, () => {
    for (const [signal, group] of [
      ["SIGINT", true],
      ["SIGTERM", false],
    ] as const) {
      const how = group ? "a terminal's Ctrl-C (SIGINT to the CLI's process group)" : "SIGTERM to the CLI";
      test(`S6 K1: ${how} during a call exits 130 with one record and leaves no member of the server's group`, async (ctx) => {
        const { cli, t } = await cliDuringCall();
        const sentAt = cli.signal(signal, { group });
        const run = await cli.exited;
        const members = groupMembers(t.server);
        const ms = run.exitedAt - sentAt;
        assertOneCancelledRecord(run);
        assert.deepEqual(members, [], "no member of the server's process group runs after the CLI exited");
        assertTreeGone(t, "after the CLI exited");
        assert.ok(ms <= CLEANUP_GRACE_MS + SLACK_MS, `${signal} to exit took ${Math.round(ms)} ms`);
        ctx.diagnostic(
          `${signal}: exit ${Math.round(ms)} ms after the signal; group members left: ${members.length}`,
        );
      });
    }

    test("S6 K1: a second Ctrl-C during the shutdown exits at once, with one record, and still ends the tree", async (ctx) => {
      const { cli, t } = await cliDuringCall();
      cli.signal("SIGINT", { group: true });
      // The server leaves on its stdin's end; its helpers then sit in their SIGTERM grace.
      await until(() => !running(t.server), 5_000, "the server to leave on its stdin's end");
      assert.ok(running(t.stubborn), "the SIGTERM-proof helper is still there");
      const sentAt = cli.signal("SIGINT", { group: true });
      const run = await cli.exited;
      const ms = run.exitedAt - sentAt;
      assertOneCancelledRecord(run);
      // The exiting CLI sends SIGKILL to the group; the kernel takes a moment to deliver it.
      await until(() => leftovers(t).length === 0, 1_000, "the tree to be gone after a forced exit");
      ctx.diagnostic(`second SIGINT: exit ${Math.round(ms)} ms after it`);
    });
  });
});
