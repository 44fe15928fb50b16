import type { Clock } from "../lifecycle/clock.ts";
import type { Task } from "./results.ts";

/** The wait between polls when the server names none, in ms. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;

/** The shortest wait between polls, whatever the server asks: polling never becomes a busy loop. */
export const MIN_POLL_INTERVAL_MS = 100;

/**
 * The longest wait between polls, whatever the server asks: a server that names an hour is still
 * asked now and then (and the call budget ends the wait anyway).
 */
export const MAX_POLL_INTERVAL_MS = 30_000;

/**
 * How long an abandoned task's `tasks/cancel` may take before the abandoned call settles, in ms:
 * the call's own budget is spent by then, so the notice gets this grace of its own.
 */
export const TASK_CANCEL_GRACE_MS = 1_000;

/** The wait before the next poll of `task`: the server's interval, within the bounds above. */
export function pollDelayMs(task: Task): number {
  const asked = task.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  return Math.min(MAX_POLL_INTERVAL_MS, Math.max(MIN_POLL_INTERVAL_MS, asked));
}

/**
 * Waits `ms`, or less when `wake` fires (a status notification for the task), or rejects with the
 * signal's reason. Its timer keeps the process alive: the caller is awaiting it. The timer, the
 * abort listener and the wake subscription are all removed however the wait ends.
 */
export function pollPause(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  wake: (early: () => void) => () => void,
): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let unsubscribe = () => {};
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      unsubscribe();
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () => finish(signal.reason ?? new Error("aborted"));
    const timer = clock.setTimeout(() => finish(), ms, true);
    signal.addEventListener("abort", onAbort, { once: true });
    unsubscribe = wake(() => finish());
    if (settled) unsubscribe();
  });
}
