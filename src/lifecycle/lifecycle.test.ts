import assert from "node:assert/strict";
import { test } from "node:test";
import { Interrupt } from "../errors/interrupt.ts";
import { CallClock } from "./call-clock.ts";
import type { Clock } from "./clock.ts";
import { Deadline } from "./deadline.ts";
import { Slots } from "./slots.ts";

/** A clock whose time moves only when the test says so. */
function fakeClock(): Clock & { advance(ms: number): void } {
  let now = 0;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let next = 1;
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = next++;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((t) => t.id !== id);
    },
    advance(ms) {
      now += ms;
      for (;;) {
        const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers = timers.filter((t) => t !== due);
        due.fn();
      }
    },
  };
}

test("E1: each stage runs on min(its limit, what remains) and reports which one fired", () => {
  const clock = fakeClock();
  const deadline = new Deadline(clock, 1000);
  const stage = deadline.stage(300, "handshake_timeout");
  clock.advance(299);
  assert.equal(stage.signal.aborted, false);
  clock.advance(1);
  assert.ok(stage.signal.reason instanceof Interrupt && stage.signal.reason.reason === "handshake_timeout");
  stage.dispose();
  clock.advance(500); // 800 in all
  const late = deadline.stage(300, "handshake_timeout"); // only 200 remain: the deadline is tighter
  clock.advance(200);
  assert.ok(late.signal.reason instanceof Interrupt && late.signal.reason.kind === "deadline");
  assert.equal(deadline.signal.aborted, true);
  assert.equal(deadline.remainingMs(), 0);
});

test("E3: caller cancellation reaches every stage with the caller's reason kept", () => {
  const clock = fakeClock();
  const caller = new AbortController();
  const deadline = new Deadline(clock, 1000, caller.signal);
  const stage = deadline.stage(500, "probe_timeout");
  const reason = new Interrupt("caller", "cancelled", undefined, "because");
  caller.abort(reason);
  assert.equal(stage.signal.reason, reason);
  deadline.dispose();
});

test("P4: progress restarts a call's idle clock, but never past its total limit", () => {
  const clock = fakeClock();
  const call = new CallClock(clock, 100, 250, new AbortController().signal);
  clock.advance(90);
  call.touch();
  clock.advance(90);
  call.touch();
  assert.equal(call.signal.aborted, false);
  clock.advance(70); // 250 in all
  assert.ok(call.signal.reason instanceof Interrupt && call.signal.reason.reason === "max_total_timeout");
  call.dispose();
  const idle = new CallClock(clock, 100, 250, new AbortController().signal);
  clock.advance(100);
  assert.ok(idle.signal.reason instanceof Interrupt && idle.signal.reason.kind === "deadline");
});

test("slots bound requests in flight; waiters get slots in order and leave when their signal aborts", async () => {
  const slots = new Slots(2);
  const never = new AbortController().signal;
  const a = await slots.acquire(never);
  const b = await slots.acquire(never);
  assert.equal(slots.inFlight, 2);
  const order: string[] = [];
  const c = slots.acquire(never).then((r) => {
    order.push("c");
    return r;
  });
  const gone = new AbortController();
  const d = slots.acquire(gone.signal);
  const e = slots.acquire(never).then((r) => {
    order.push("e");
    return r;
  });
  assert.equal(slots.waiting, 3);
  gone.abort(new Error("gave up"));
  await assert.rejects(d, /gave up/);
  assert.equal(slots.waiting, 2);
  a();
  a(); // releasing twice frees one slot, not two
  b();
  (await c)();
  (await e)();
  assert.deepEqual(order, ["c", "e"]);
  assert.equal(slots.inFlight, 0);
});
