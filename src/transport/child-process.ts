import { type ChildProcess, spawn } from "node:child_process";
import type { SpawnFn } from "../options/deps.ts";
import { KILL_REAP_MS, SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS } from "./grace.ts";
import { OWN_GROUP, ProcessTree } from "./process-tree.ts";

/**
 * What a stdio server inherits of our environment by default: enough to find programs and a
 * home, and none of the credentials an environment tends to hold. Anything else is given
 * explicitly (`env`), or all of it with `inheritEnv: "all"`.
 */
export const INHERITED_ENV: readonly string[] =
  process.platform === "win32"
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "PROGRAMFILES",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
        "WINDIR",
      ]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];

export function inheritedEnv(mode: "safe" | "all"): Record<string, string> {
  if (mode === "all") return { ...(process.env as Record<string, string>) };
  const out: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

export interface ChildOptions {
  command: string;
  args: readonly string[];
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  /** How much of our environment the server inherits (default `safe`: see INHERITED_ENV). */
  inheritEnv?: "safe" | "all";
  /**
   * What happens to the server's stderr, which is its log: dropped, passed through to ours, or
   * (`pipe`) read by whoever started it.
   */
  stderr: "ignore" | "inherit" | "pipe";
}

/** Each started server's process tree, for the one shutdown path to end whole. */
const trees = new WeakMap<ChildProcess, ProcessTree>();

export function startChild(options: ChildOptions, spawnFn: SpawnFn = spawn): ChildProcess {
  const child = spawnFn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...inheritedEnv(options.inheritEnv ?? "safe"), ...options.env },
    stdio: ["pipe", "pipe", options.stderr],
    windowsHide: true,
    // A process group of its own (POSIX): see OWN_GROUP.
    detached: OWN_GROUP,
  });
  trees.set(child, new ProcessTree(child));
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      child.off("exit", onExit);
      resolve(value);
    };
    const onExit = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    child.once("exit", onExit);
  });
}

/** The first and the longest pause between two looks at the rest of a group whose leader exited. */
const GROUP_POLL_FIRST_MS = 5;
const GROUP_POLL_MAX_MS = 100;

/**
 * Waits up to `ms` for the whole tree to be gone: the server's exit is an event; the rest of its
 * group has none that reaches us, so it is looked at again at growing intervals.
 */
async function waitTreeGone(child: ChildProcess, tree: ProcessTree, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  if (!(await waitExit(child, ms))) return false;
  let pause = GROUP_POLL_FIRST_MS;
  while (tree.running()) {
    const left = until - performance.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, GROUP_POLL_MAX_MS);
  }
  return true;
}

/**
 * The one shutdown path for a server process and everything it started: close stdin and wait for
 * the server to exit, then SIGTERM to its whole process group and wait, then SIGKILL to the group.
 * With `graceful: false` (a failed or expired establishment, a lost channel) it skips the stdin
 * wait. A server that already exited by itself may have left helpers in its group: they get the
 * same SIGTERM, then SIGKILL. Resolves once the tree is gone, or once SIGKILL was sent and
 * KILL_REAP_MS passed.
 */
export async function stopChild(
  child: ChildProcess,
  graceful: boolean,
  onError: (e: unknown) => void = () => {},
): Promise<void> {
  const attempt = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      onError(e);
    }
  };
  // Ended, not destroyed: a last message written just before (a cancellation) still goes out.
  attempt(() => child.stdin?.end());
  const tree = trees.get(child) ?? new ProcessTree(child);
  try {
    if (child.pid === undefined || (exited(child) && !tree.running())) return;
    if (graceful && (await waitExit(child, STDIN_CLOSE_GRACE_MS)) && !tree.running()) return;
    attempt(() => child.stdin?.destroy());
    // A signal that cannot be sent is reported, and the next step is still taken.
    tree.signal("SIGTERM", onError);
    if (await waitTreeGone(child, tree, SIGTERM_GRACE_MS)) return;
    tree.signal("SIGKILL", onError);
    if (await waitTreeGone(child, tree, KILL_REAP_MS)) return;
    // Past SIGKILL nothing more can be sent: a process stuck in the kernel must not hold our
    // event loop open after close().
    child.unref();
  } finally {
    attempt(() => child.stdin?.destroy());
    tree.release();
  }
}
