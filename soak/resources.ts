// What the soak watches in its own process: resident memory, the JavaScript heap after a full
// collection, open file descriptors, active libuv handles by type, child processes, and the
// abort listeners left on the application's long-lived signal. Linux only (/proc).

import { getEventListeners } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How often `settle` looks again while waiting for resources to come back. */
const SETTLE_POLL_MS = 100;

/**
 * A full garbage collection, so heap figures are live objects rather than garbage not yet swept.
 * `npm run soak` runs without `--expose-gc`; the flag can still be set at run time, and a fresh
 * context then exposes `gc`.
 */
export const collectGarbage: () => void = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

export interface Sample {
  /** ms since the soak started. */
  atMs: number;
  rssBytes: number;
  heapUsedBytes: number;
  fds: number;
  /** `process.getActiveResourcesInfo()` counted by type. */
  handles: Record<string, number>;
  handleTotal: number;
  children: number;
  /** Abort listeners on the application's long-lived signal (ours must all have been removed). */
  signalListeners: number;
}

export function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** Processes whose parent is this one, zombies included: an unreaped child is a leak too. */
export function childCount(): number {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone between the listing and the read
    }
    // pid (comm) state ppid ...; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid === process.pid) count++;
  }
  return count;
}

export function activeHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

export class Probe {
  readonly #started: number;
  readonly #signal: AbortSignal;

  /** `signal` is the application's long-lived signal that every connect and call is given. */
  constructor(signal: AbortSignal, started = performance.now()) {
    this.#signal = signal;
    this.#started = started;
  }

  get elapsedMs(): number {
    return performance.now() - this.#started;
  }

  /** Everything at once, after a full collection. */
  sample(): Sample {
    collectGarbage();
    const memory = process.memoryUsage();
    const handles = activeHandles();
    return {
      atMs: this.elapsedMs,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      fds: openFds(),
      handles,
      handleTotal: Object.values(handles).reduce((a, b) => a + b, 0),
      children: childCount(),
      signalListeners: getEventListeners(this.#signal, "abort").length,
    };
  }

  /**
   * Waits until descriptors, children and every handle type are back at the baseline exactly
   * (keep-alive sockets of the shared HTTP pool close on their own after a few seconds), or
   * `timeoutMs` passes. Returns the last sample and whether it matched.
   */
  async settle(
    baseline: Sample,
    timeoutMs: number,
  ): Promise<{ ok: boolean; sample: Sample; waitedMs: number; differences: string[] }> {
    const start = performance.now();
    for (;;) {
      const sample = this.sample();
      const differences = differencesFrom(baseline, sample);
      const waitedMs = performance.now() - start;
      if (differences.length === 0 || waitedMs >= timeoutMs)
        return { ok: differences.length === 0, sample, waitedMs, differences };
      await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    }
  }
}

/** What differs between two samples among the counts that must return exactly: "fds 41 (baseline 37)". */
export function differencesFrom(baseline: Sample, now: Sample): string[] {
  const out: string[] = [];
  if (now.fds !== baseline.fds) out.push(`fds ${now.fds} (baseline ${baseline.fds})`);
  if (now.children !== baseline.children)
    out.push(`children ${now.children} (baseline ${baseline.children})`);
  if (now.signalListeners !== 0) out.push(`abort listeners on the caller's signal ${now.signalListeners}`);
  const types = new Set([...Object.keys(baseline.handles), ...Object.keys(now.handles)]);
  for (const type of [...types].sort()) {
    const was = baseline.handles[type] ?? 0;
    const is = now.handles[type] ?? 0;
    if (was !== is) out.push(`${type} handles ${is} (baseline ${was})`);
  }
  return out;
}
