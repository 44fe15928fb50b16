import assert from "node:assert/strict";
import { test } from "node:test";
import { fakeClock } from "../../test/helpers/fake-clock.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { CallClock } from "./call-clock.ts";
import { Cancellation, signalOf, stopWatching, watchAbort } from "./cancellation.ts";
import { Slots } from "./slots.ts";

test("M1: a cancellation aborts once; the first reason wins", () => {
  const c = new Cancellation();
  assert.equal(c.aborted, false);
  assert.equal(c.reason, undefined);
  const first = new Error("first");
  c.abort(first);
  c.abort(new Error("second"));
  assert.equal(c.aborted, true);
  assert.equal(c.reason, first);
});

test("M1: each callback runs once, in the order added; one added after the abort never runs", () => {
  const c = new Cancellation();
  const calls: string[] = [];
  c.add(() => calls.push("a"));
  c.add(() => calls.push("b"));
  c.add(() => calls.push("c"));
  c.abort("x");
  c.abort("y");
  c.add(() => calls.push("late"));
  assert.deepEqual(calls, ["a", "b", "c"]);
});

test("M1: a removed callback never runs, and removing the first keeps the others' order", () => {
  const c = new Cancellation();
  const calls: string[] = [];
  const a = () => calls.push("a");
  const b = () => calls.push("b");
  c.add(a);
  c.add(b);
  c.remove(a);
  c.add(() => calls.push("c"));
  c.remove(() => {}); // not registered: nothing happens
  c.abort("x");
  assert.deepEqual(calls, ["b", "c"]);
});

test("M1: a callback that removes a later one during the abort keeps it from running", () => {
  const c = new Cancellation();
  const calls: string[] = [];
  const later = () => calls.push("later");
  c.add(() => {
    calls.push("first");
    c.remove(later);
  });
  c.add(() => calls.push("second"));
  c.add(later);
  c.abort("x");
  assert.deepEqual(calls, ["first", "second"]);
});

test("M1: the AbortSignal is made on demand, is the same object each time, and mirrors the state", () => {
  const c = new Cancellation();
  const signal = c.signal;
  assert.equal(c.signal, signal, "one signal per cancellation");
  assert.equal(signal.aborted, false);
  let heard: unknown;
  signal.addEventListener("abort", () => {
    heard = signal.reason;
  });
  const reason = new Interrupt("deadline", "deadline_exceeded", 10);
  c.abort(reason);
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, reason);
  assert.equal(heard, reason, "the signal's listeners are told");

  const late = new Cancellation();
  late.abort(reason);
  assert.equal(late.signal.aborted, true, "a signal made after the abort is already aborted");
  assert.equal(late.signal.reason, reason);
});

test("M1: watchAbort / stopWatching / signalOf treat an AbortSignal and a Cancellation alike", () => {
  for (const make of [
    () => {
      const controller = new AbortController();
      return { source: controller.signal, abort: (r: unknown) => controller.abort(r) };
    },
    () => {
      const c = new Cancellation();
      return { source: c, abort: (r: unknown) => c.abort(r) };
    },
  ]) {
    const { source, abort } = make();
    let kept = 0;
    let dropped = 0;
    const keep = () => kept++;
    const drop = () => dropped++;
    watchAbort(source, keep);
    watchAbort(source, drop);
    stopWatching(source, drop);
    abort("why");
    assert.equal(kept, 1);
    assert.equal(dropped, 0);
    assert.equal(signalOf(source).aborted, true);
    assert.equal(signalOf(source).reason, "why");
  }
});

test("P4: a call clock aborts its cancellation when idle, and progress restarts the idle clock", async () => {
  const clock = fakeClock();
  const call = new CallClock(clock, 100, 1000);
  await clock.advance(90);
  call.touch();
  await clock.advance(90);
  assert.equal(call.cancellation.aborted, false, "touched 90 ms ago, not 180");
  await clock.advance(10);
  assert.equal(call.cancellation.aborted, true);
  const reason = call.cancellation.reason as Interrupt;
  assert.ok(reason instanceof Interrupt);
  assert.equal(reason.reason, "deadline_exceeded");
  assert.equal(call.signal.reason, reason, "the lazy signal carries the same interrupt");
  call.dispose();
  assert.equal(clock.pending().length, 0, "dispose clears every timer");
});

test("P4: nothing extends a call clock's total limit", async () => {
  const clock = fakeClock();
  const call = new CallClock(clock, 100, 250);
  for (let t = 0; t < 240; t += 80) {
    await clock.advance(80);
    call.touch();
  }
  await clock.advance(10);
  assert.equal(call.cancellation.aborted, true);
  assert.equal((call.cancellation.reason as Interrupt).reason, "max_total_timeout");
  call.dispose();
});

test("P7: a caller's signal aborts the call clock with a caller interrupt keeping the caller's reason", async () => {
  const clock = fakeClock();
  const caller = new AbortController();
  const call = new CallClock(clock, 100, 100, caller.signal);
  const why = new Error("user pressed stop");
  caller.abort(why);
  const reason = call.cancellation.reason as Interrupt;
  assert.ok(reason instanceof Interrupt);
  assert.equal(reason.kind, "caller");
  assert.equal(reason.callerReason, why);
  call.dispose();

  const already = new AbortController();
  already.abort(why);
  const late = new CallClock(clock, 100, 100, already.signal);
  assert.equal(late.cancellation.aborted, true, "a caller's signal that had aborted aborts at once");
  late.dispose();

  const after = new AbortController();
  const done = new CallClock(clock, 100, 100, after.signal);
  done.dispose();
  after.abort(why);
  assert.equal(done.cancellation.aborted, false, "dispose unhooks the caller's signal");
});

test("M1: a slot waiter on a cancellation leaves the queue when it aborts, and the next waiter is served", async () => {
  const slots = new Slots(1);
  const held = slots.tryAcquire();
  assert.ok(held);
  assert.equal(slots.tryAcquire(), undefined, "all slots taken");
  const gone = new Cancellation();
  const waiting = slots.acquire(gone);
  const next = slots.acquire(new Cancellation());
  assert.equal(slots.waiting, 2);
  const reason = new Interrupt("deadline", "deadline_exceeded", 5);
  gone.abort(reason);
  await assert.rejects(waiting, (e) => e === reason);
  assert.equal(slots.waiting, 1);
  held();
  const release = await next;
  assert.equal(slots.inFlight, 1);
  release();
  release();
  assert.equal(slots.inFlight, 0, "a release is counted once");

  const spent = new Cancellation();
  spent.abort(reason);
  await assert.rejects(slots.acquire(spent), (e) => e === reason);
});
