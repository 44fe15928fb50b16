import { type ChildProcess, spawn } from "node:child_process";

/** After stdin closes, how long a server gets to exit by itself before SIGTERM. */
export const STDIN_CLOSE_GRACE_MS = 500;
/** After SIGTERM, how long a server gets before SIGKILL. */
export const SIGTERM_GRACE_MS = 1000;
/**
 * The most any shutdown of ours can take beyond the deadline that triggered it: the two graces
 * above, plus a little for the kernel to reap the killed process.
 */
export const CLEANUP_GRACE_MS = STDIN_CLOSE_GRACE_MS + SIGTERM_GRACE_MS + 250;

export type SpawnFn = typeof spawn;

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
  /** What happens to the server's stderr, which is its log: dropped, or passed through to ours. */
  stderr: "ignore" | "inherit";
}

export function startChild(options: ChildOptions, spawnFn: SpawnFn = spawn): ChildProcess {
  return spawnFn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...inheritedEnv(options.inheritEnv ?? "safe"), ...options.env },
    stdio: ["pipe", "pipe", options.stderr],
    windowsHide: true,
  });
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

/**
 * The one shutdown path for a server process: close stdin and wait, then SIGTERM and wait, then
 * SIGKILL. With `graceful: false` (a failed or expired establishment) it skips the stdin wait.
 * Resolves once the process has exited (or could not be signalled at all).
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
  attempt(() => {
    child.stdin?.end();
    child.stdin?.destroy();
  });
  if (exited(child) || child.pid === undefined) return;
  if (graceful && (await waitExit(child, STDIN_CLOSE_GRACE_MS))) return;
  // A signal that cannot be sent is reported, and the next step is still taken.
  attempt(() => child.kill("SIGTERM"));
  if (await waitExit(child, SIGTERM_GRACE_MS)) return;
  attempt(() => child.kill("SIGKILL"));
  if (!(await waitExit(child, 250)) && child.pid !== undefined)
    attempt(() => process.kill(child.pid!, "SIGKILL"));
}
