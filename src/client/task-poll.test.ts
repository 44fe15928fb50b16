import assert from "node:assert/strict";
import { test } from "node:test";
import { fakeClock } from "../../test/helpers/fake-clock.ts";
import { MAX_POLL_INTERVAL_MS, MIN_POLL_INTERVAL_MS, pollDelayMs, pollPause } from "./task-poll.ts";

test("M1: the poll interval is the server's, never below the floor nor above the cap", () => {
  assert.equal(pollDelayMs({ taskId: "t", status: "working", pollIntervalMs: 2500 }), 2500);
  assert.equal(pollDelayMs({ taskId: "t", status: "working", pollIntervalMs: 0 }), MIN_POLL_INTERVAL_MS);
  assert.equal(
    pollDelayMs({ taskId: "t", status: "working", pollIntervalMs: 3_600_000 }),
    MAX_POLL_INTERVAL_MS,
  );
  assert.ok(pollDelayMs({ taskId: "t", status: "working" }) >= MIN_POLL_INTERVAL_MS);
});

test("M1: a poll pause ends at its interval, early on a wake, or at once on abort, leaving nothing behind", async () => {
  const clock = fakeClock();
  let subscribed = 0;
  let wakeUp: (() => void) | undefined;
  const wake = (early: () => void) => {
    subscribed++;
    wakeUp = early;
    return () => {
      subscribed--;
    };
  };
  const timed = pollPause(clock, 500, new AbortController().signal, wake);
  await clock.advance(500);
  await timed;
  assert.equal(subscribed, 0);
  assert.equal(clock.pending().length, 0);

  const woken = pollPause(clock, 500, new AbortController().signal, wake);
  wakeUp?.();
  await woken;
  assert.equal(subscribed, 0);
  assert.equal(clock.pending().length, 0);

  const controller = new AbortController();
  const aborted = pollPause(clock, 500, controller.signal, wake);
  controller.abort(new Error("stop"));
  await assert.rejects(aborted, /stop/);
  assert.equal(subscribed, 0);
  assert.equal(clock.pending().length, 0);
});
