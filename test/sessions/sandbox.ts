// Per-test surroundings for session tests: private runtime, home and cache folders (so no two
// tests ever share a daemon), a loopback reporter the fixture server tells what it received, and
// process checks that prove nothing is left running.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { type CliOptions, type CliRun, runCli } from "../helpers/cli.ts";
import { until } from "../helpers/fake-clock.ts";

export const STATEFUL = fileURLToPath(new URL("../fixtures/sessions/stateful-server.mjs", import.meta.url));

export interface Sandbox {
  dir: string;
  runtime: string;
  env: Record<string, string>;
  run(args: string[], options?: CliOptions): Promise<CliRun>;
  /** Pids to check (and kill, if a test failed half-way) when the test ends. */
  pids: Set<number>;
  /** Kills whatever is left, then says whether anything was. */
  cleanup(): Promise<number[]>;
}

export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "tether-sessions-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const home = join(dir, "home");
  mkdirSync(home);
  const env = {
    XDG_RUNTIME_DIR: runtime,
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_CONFIG_HOME: join(home, "config"),
    TETHER_CACHE_DIR: join(dir, "cache"),
    TETHER_CONFIG_DIR: join(dir, "config"),
  };
  const pids = new Set<number>();
  return {
    dir,
    runtime,
    env,
    pids,
    run: (args, options = {}) =>
      runCli(args, { timeoutMs: 20_000, ...options, env: { ...env, ...options.env } }),
    async cleanup() {
      // A daemon exits just after its last session's reply: it gets a moment to do so.
      const left: number[] = [];
      for (const pid of pids) if (!(await gone(pid, 5_000))) left.push(pid);
      for (const pid of left) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      for (const pid of left) await gone(pid);
      rmSync(dir, { recursive: true, force: true });
      return left;
    },
  };
}

/**
 * A sandbox owned by one test: when that test ends, whatever is left is killed and the test fails
 * if anything was. Each test holds its own, so the tests of a file can run side by side.
 */
export function sandboxFor(t: TestContext): Sandbox {
  const box = sandbox();
  t.after(async () => {
    const left = await box.cleanup();
    assert.deepEqual(left, [], "a daemon or server was still running when the test ended");
  });
  return box;
}

/** A reporter owned by one test, closed when that test ends. */
export async function reporterFor(t: TestContext): Promise<Reporter> {
  const r = await reporter();
  t.after(() => r.close());
  return r;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once the process has exited. A process we do not parent cannot be waited on by
 * event, so its liveness is polled (the suite's one condition wait), up to `withinMs` (a bound on a
 * hung test).
 */
export async function gone(pid: number, withinMs = 10_000): Promise<boolean> {
  try {
    await until(() => !alive(pid), withinMs, `process ${pid} to exit`);
    return true;
  } catch {
    return false;
  }
}

/** A loopback listener the fixture reports to: each line it sends, and a wait for the next match. */
export interface Reporter {
  port: number;
  lines: string[];
  next(match: RegExp, withinMs?: number): Promise<string>;
  close(): void;
}

export async function reporter(): Promise<Reporter> {
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve: (l: string) => void; seen: number }[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let held = "";
    socket.on("data", (d) => {
      held += d;
      let nl = held.indexOf("\n");
      while (nl !== -1) {
        const line = held.slice(0, nl);
        held = held.slice(nl + 1);
        lines.push(line);
        for (const w of [...waiters])
          if (w.match.test(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        nl = held.indexOf("\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  let from = 0;
  return {
    port,
    lines,
    next(match, withinMs = 15_000) {
      // Lines already received after the last match count.
      for (let i = from; i < lines.length; i++)
        if (match.test(lines[i]!)) {
          from = i + 1;
          return Promise.resolve(lines[i]!);
        }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no report matching ${match} within ${withinMs} ms`)),
          withinMs,
        );
        waiters.push({
          match,
          seen: lines.length,
          resolve: (l) => {
            clearTimeout(timer);
            from = lines.length;
            resolve(l);
          },
        });
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** Starts a session on the stateful fixture; returns what `session start --json` said. */
export async function startStateful(
  box: Sandbox,
  name: string,
  extra: string[] = [],
  reportPort?: number,
  env?: Record<string, string>,
): Promise<{ daemonPid: number; run: CliRun } & Record<string, unknown>> {
  const report = reportPort === undefined ? [] : ["-e", `REPORT_PORT=${reportPort}`];
  // Should a test run be killed before its cleanup, its daemon still ends within two minutes.
  const idle = extra.includes("--idle-timeout") ? [] : ["--idle-timeout", "120000"];
  const run = await box.run(
    ["session", "start", name, "--json", ...idle, ...extra, ...report, "--", process.execPath, STATEFUL],
    { env },
  );
  if (run.code !== 0) throw new Error(`session start failed (${run.code}): ${run.stderr}`);
  const info = JSON.parse(run.stdout) as { daemonPid: number } & Record<string, unknown>;
  box.pids.add(info.daemonPid);
  return { ...info, run };
}
