// A fake `deps.clock` for tests of timing decisions (deadlines, stage limits, back-off, graces,
// Retry-After waits, call clocks): its time moves only when the test advances it, so a limit
// fires at exactly its value however busy the machine is, and a reply that decides an outcome
// before any limit is seen to do so (the connection settles with the clock never advanced).
//
// I/O stays real (loopback servers, child processes): a test waits for the event it needs (a
// timer being set, a request reaching the server), then moves time. Only the library's timers
// go through the clock; the child-process kill graces and the test's own waits stay real.
//
// Also here: `until` (wait for an event) and `trackedClock` (the real clock, with a record of
// pending timers, for checking that nothing of ours is left to happen).

import type { Clock } from "../../src/lifecycle/clock.ts";

export interface FakeTimer {
  readonly id: number;
  /** Fake time it was set at. */
  readonly setAt: number;
  /** Its delay, as asked. */
  readonly ms: number;
  /** Fake time it fires at. */
  readonly at: number;
  /** Whether the library asked for a timer that holds the process open (a back-off). */
  readonly keepAlive: boolean;
}

export interface FakeClock extends Clock {
  /** Timers set and neither fired nor cleared, earliest first. */
  pending(): FakeTimer[];
  /** Timers fired so far, in firing order. */
  fired(): FakeTimer[];
  /**
   * Resolves with the first timer (pending now, or set later) that `match` accepts. Rejects if
   * none is set within `withinMs` of real time: a bound on a hung test, not a measurement.
   */
  timer(match?: (t: FakeTimer) => boolean, withinMs?: number): Promise<FakeTimer>;
  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way, earliest first,
   * with a turn of the event loop after each so what it starts can run (and set new timers).
   */
  advance(ms: number): Promise<void>;
  /** Moves time to when `t` fires (and fires it, with anything due before it). */
  advanceTo(t: FakeTimer): Promise<void>;
}

/** A turn of the event loop: promise reactions and already-due I/O callbacks run first. */
export const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long (real time) `timer()` waits by default before calling the test hung. */
const TIMER_WAIT_MS = 30_000;

interface Entry extends FakeTimer {
  fn: () => void;
}

interface Waiter {
  match: (t: FakeTimer) => boolean;
  resolve: (t: FakeTimer) => void;
}

const view = ({ fn: _fn, ...t }: Entry): FakeTimer => t;

export function fakeClock(): FakeClock {
  let now = 0;
  let next = 1;
  let entries: Entry[] = [];
  const fired: FakeTimer[] = [];
  let waiters: Waiter[] = [];

  const pending = () => [...entries].sort((a, b) => a.at - b.at || a.id - b.id);

  async function advanceUntil(target: number): Promise<void> {
    for (;;) {
      const due = pending().find((t) => t.at <= target);
      if (!due) break;
      entries = entries.filter((t) => t !== due);
      now = Math.max(now, due.at);
      fired.push(view(due));
      due.fn();
      await turn();
    }
    now = Math.max(now, target);
  }

  return {
    now: () => now,
    setTimeout(fn, ms, keepAlive) {
      const entry: Entry = {
        id: next++,
        setAt: now,
        ms,
        at: now + Math.max(0, ms),
        keepAlive: keepAlive === true,
        fn,
      };
      entries.push(entry);
      const t = view(entry);
      const matched = waiters.filter((w) => w.match(t));
      waiters = waiters.filter((w) => !matched.includes(w));
      for (const w of matched) w.resolve(t);
      return entry.id;
    },
    clearTimeout(handle) {
      entries = entries.filter((t) => t.id !== handle);
    },
    pending: () => pending().map(view),
    fired: () => [...fired],
    timer(match = () => true, withinMs = TIMER_WAIT_MS) {
      const found = pending().map(view).find(match);
      if (found) return Promise.resolve(found);
      return new Promise<FakeTimer>((resolve, reject) => {
        const waiter: Waiter = {
          match,
          resolve: (t) => {
            clearTimeout(guard);
            resolve(t);
          },
        };
        const guard = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          const seen = pending()
            .map((t) => `${t.ms} ms`)
            .join(", ");
          reject(new Error(`no matching timer was set within ${withinMs} ms (pending: ${seen || "none"})`));
        }, withinMs);
        // A bound on a hung test: it never holds the process open by itself.
        guard.unref();
        waiters.push(waiter);
      });
    },
    advance: (ms) => advanceUntil(now + ms),
    advanceTo: (t) => advanceUntil(t.at),
  };
}

/**
 * Resolves once `check()` holds, polling every few ms: a wait for an event (a request reached
 * the server, a process logged a message), never for a time. Rejects after `withinMs` of real
 * time, a bound on a hung test.
 */
export async function until(
  check: () => boolean,
  withinMs = TIMER_WAIT_MS,
  what = "the condition",
): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > withinMs) throw new Error(`${what} did not hold within ${withinMs} ms`);
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
}

export interface TrackedClock extends Clock {
  /** Timers set and neither fired nor cleared: work of ours that could still start something. */
  pending(): { ms: number; keepAlive: boolean }[];
}

/**
 * The real clock, with a record of the timers still pending: after an outcome, an empty record
 * shows that nothing of ours is scheduled to happen later (no back-off, no retry, no stray limit),
 * which a test can check at once instead of watching for a while.
 */
export function trackedClock(): TrackedClock {
  const live = new Map<NodeJS.Timeout, { ms: number; keepAlive: boolean }>();
  return {
    now: () => performance.now(),
    setTimeout(fn, ms, keepAlive) {
      const t = setTimeout(() => {
        live.delete(t);
        fn();
      }, ms);
      // As the real clock: only a timer that is itself the pending work holds the process open.
      if (!keepAlive) t.unref();
      live.set(t, { ms, keepAlive: keepAlive === true });
      return t;
    },
    clearTimeout(handle) {
      live.delete(handle as NodeJS.Timeout);
      clearTimeout(handle as NodeJS.Timeout);
    },
    pending: () => [...live.values()],
  };
}
