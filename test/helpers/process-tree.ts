// Looking at process trees from a test, and driving the built CLI with a signal sent on an event
// (the server received the call), never after a fixed delay: CONTRACT S6, S7, K1.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { CLI_BIN } from "./cli.ts";
import { outputOf } from "./toolkit.ts";

const HAS_PROC = existsSync("/proc/self/stat");

/** `state` and `pgrp` of a process from /proc/<pid>/stat (comm may hold spaces and parentheses). */
function statOf(pid: string | number): { state: string; pgrp: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const [state = "", , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, pgrp: Number(pgrp) };
}

/**
 * Whether a process is still running. A zombie is not: it has exited and holds nothing; an
 * orphan's zombie waits for init, which may take its time to reap it.
 */
export function running(pid: number): boolean {
  if (HAS_PROC) {
    const s = statOf(pid);
    return s !== undefined && s.state !== "Z" && s.state !== "X";
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pids of the running (non-zombie) members of a process group. */
export function groupMembers(pgid: number): number[] {
  if (!HAS_PROC) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = statOf(entry);
    if (s && s.pgrp === pgid && s.state !== "Z" && s.state !== "X") members.push(Number(entry));
  }
  return members;
}

export function killQuietly(pid: number, group = false): void {
  try {
    process.kill(group ? -pid : pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** performance.now() when the process exited. */
  exitedAt: number;
}

export interface RunningCli {
  child: ChildProcess;
  pid: number;
  exited: Promise<CliExit>;
  /**
   * Sends a signal the way a terminal does for Ctrl-C (`group: true`: to the CLI's whole process
   * group), or the way `kill` does (to the CLI alone). Returns performance.now() at sending.
   */
  signal(signal: NodeJS.Signals, options?: { group?: boolean }): number;
}

/**
 * Starts the built CLI in its own process group, as a shell starts a foreground job, so a
 * terminal-style Ctrl-C can be sent to that group. It is killed (group and all) after `killAfterMs`.
 */
export function startCli(
  args: string[],
  options: { env?: Record<string, string>; killAfterMs?: number } = {},
): RunningCli {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the CLI could not be started");
  const output = outputOf(child);
  const killer = setTimeout(() => killQuietly(pid, true), options.killAfterMs ?? 20_000);
  const exited = new Promise<CliExit>((resolve) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
    child.once("exit", (code, signal) => {
      exit = { code, signal, at: performance.now() };
    });
    child.once("close", () => {
      clearTimeout(killer);
      resolve({ code: exit?.code ?? null, signal: exit?.signal ?? null, ...output, exitedAt: exit!.at });
    });
  });
  return {
    child,
    pid,
    exited,
    signal(signal, o = {}) {
      const at = performance.now();
      process.kill(o.group ? -pid : pid, signal);
      return at;
    },
  };
}
