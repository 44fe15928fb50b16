import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * Whether a stdio server starts in a process group of its own. On POSIX it does (`detached`: a new
 * session, so a terminal's Ctrl-C reaches only us and we decide how the server ends), and every
 * shutdown signal goes to the whole group: helpers the server started go with it. Windows has no
 * groups to signal; there the tree is ended by pid (taskkill /T).
 */
export const OWN_GROUP = process.platform !== "win32";

const HAS_PROC = OWN_GROUP && existsSync("/proc/self/stat");

/** Trees started and not yet ended: killed outright if the host process exits without closing them. */
const live = new Set<ProcessTree>();

function killLiveTrees(): void {
  // Nothing asynchronous runs any more: SIGKILL is the one thing that still works.
  for (const tree of live) tree.killNow();
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Whether group `pgid` has a member we may signal (zombies included). */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    // ESRCH: no member left. EPERM: only members we may not signal, which we cannot end anyway.
    return false;
  }
}

/**
 * Whether any process of group `pgid` still runs. An orphan's zombie is left out: it has exited and
 * holds nothing, and reaping it is init's business, which may take a while.
 */
function groupRunning(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  if (!HAS_PROC) return true;
  for (const entry of readdirSync("/proc")) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 3);
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/**
 * A server process and everything it started: the process group it leads (POSIX), or its process
 * tree (Windows). The group outlives its leader while any member lives, so it is signalled, and
 * watched, by its id even after the server itself exited.
 */
export class ProcessTree {
  readonly #child: ChildProcess;
  readonly #pid: number | undefined;
  /** Whether the child really leads a group of its own (an injected spawn may ignore `detached`). */
  readonly #grouped: boolean;
  #taskkilled = false;

  constructor(child: ChildProcess) {
    this.#child = child;
    this.#pid = child.pid;
    this.#grouped = OWN_GROUP && this.#pid !== undefined && groupExists(this.#pid);
    if (this.#pid === undefined) return;
    if (live.size === 0) process.on("exit", killLiveTrees);
    live.add(this);
  }

  get leaderExited(): boolean {
    return this.#child.exitCode !== null || this.#child.signalCode !== null;
  }

  /** Whether any process of the tree still runs. */
  running(): boolean {
    if (this.#pid === undefined) return false;
    if (this.#grouped) return groupRunning(this.#pid);
    return !this.leaderExited;
  }

  /**
   * Sends `signal` to the whole tree. A tree already gone is not an error; any other failure goes
   * to `onError`, and the leader is still signalled directly.
   */
  signal(signal: "SIGTERM" | "SIGKILL", onError: (e: unknown) => void): void {
    const pid = this.#pid;
    if (pid === undefined) return;
    if (this.#grouped) {
      try {
        process.kill(-pid, signal);
        return;
      } catch (error) {
        if (errnoCode(error) === "ESRCH") return;
        onError(error);
      }
    } else if (process.platform === "win32" && !this.#taskkilled && !this.leaderExited) {
      // Windows has no signals to escalate: the first step ends the whole tree, forcibly.
      this.#taskkilled = true;
      const taskkill = spawn("taskkill", ["/T", "/F", "/PID", String(pid)], {
        stdio: "ignore",
        windowsHide: true,
      });
      taskkill.once("error", onError);
    }
    if (this.leaderExited) return;
    try {
      this.#child.kill(signal);
    } catch (error) {
      onError(error);
      try {
        // The handle refused; the kernel may still take it by pid.
        process.kill(pid, signal);
      } catch {
        // Reported above already.
      }
    }
  }

  /** SIGKILL at once, synchronously: for a host process that is exiting. */
  killNow(): void {
    try {
      if (this.#grouped && this.#pid !== undefined) process.kill(-this.#pid, "SIGKILL");
      else if (!this.leaderExited) this.#child.kill("SIGKILL");
    } catch {
      // Already gone, or beyond our reach: the host is exiting either way.
    }
  }

  /** The tree is ended (or beyond what signals can do): the exit-time kill no longer applies. */
  release(): void {
    if (!live.delete(this)) return;
    if (live.size === 0) process.off("exit", killLiveTrees);
  }
}
