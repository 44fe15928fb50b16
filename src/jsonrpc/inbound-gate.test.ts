// The inbound gate's decisions on a fake clock (CONTRACT S5, D1, D2): one bound on requests in
// flight, one token bucket shared by requests and notifications, drops counted and reported at
// most once per interval, and every slot's signal aborted at close.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  INBOUND_BURST,
  INBOUND_LIMITS,
  INBOUND_RATE_PER_SECOND,
  INBOUND_REPORT_INTERVAL_MS,
  type InboundDrops,
  InboundGate,
  type InboundLimits,
  type InboundSlot,
  MAX_INBOUND_IN_FLIGHT,
} from "./inbound-gate.ts";

function setup(limits: Partial<InboundLimits> = {}) {
  let now = 1_000;
  const reports: InboundDrops[] = [];
  const gate = new InboundGate({ now: () => now }, (d) => reports.push(d), { ...INBOUND_LIMITS, ...limits });
  return {
    gate,
    reports,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Admits `n` requests, keeping the slots; fails if any is turned away. */
function admitAll(gate: InboundGate, n: number): InboundSlot[] {
  return Array.from({ length: n }, (_, i) => {
    const slot = gate.admitRequest();
    assert.ok(slot, `request ${i} admitted`);
    return slot;
  });
}

describe("S5: the inbound gate", () => {
  test("S5: the defaults are finite, positive and consistent", () => {
    for (const v of [
      MAX_INBOUND_IN_FLIGHT,
      INBOUND_RATE_PER_SECOND,
      INBOUND_BURST,
      INBOUND_REPORT_INTERVAL_MS,
    ])
      assert.ok(Number.isInteger(v) && v > 0);
    assert.ok(INBOUND_BURST >= MAX_INBOUND_IN_FLIGHT, "a full bound fits in one burst");
    assert.ok(Object.isFrozen(INBOUND_LIMITS));
  });

  test("S5: requests in flight are bounded; a released slot makes room for one more", () => {
    const { gate } = setup({ maxInFlight: 3 });
    const slots = admitAll(gate, 3);
    assert.equal(gate.inFlight, 3);
    assert.equal(gate.admitRequest(), undefined, "the fourth is dropped");
    assert.deepEqual(gate.dropped, { requests: 1, notifications: 0 });
    slots[0]!.release();
    slots[0]!.release();
    assert.equal(gate.inFlight, 2, "release is idempotent");
    assert.ok(gate.admitRequest(), "room again");
    assert.equal(gate.admitRequest(), undefined);
  });

  test("S5: a request turned away for want of room takes no token", () => {
    const { gate } = setup({ maxInFlight: 1, burst: 2, ratePerSecond: 1 });
    const [slot] = admitAll(gate, 1);
    for (let i = 0; i < 10; i++) assert.equal(gate.admitRequest(), undefined);
    slot!.release();
    admitAll(gate, 1);
  });

  test("S5: requests and notifications share one bucket: a burst, then the rate", () => {
    const { gate, advance } = setup({ maxInFlight: 1_000, burst: 10, ratePerSecond: 100 });
    for (let i = 0; i < 5; i++) assert.ok(gate.admitNotification());
    const slots = admitAll(gate, 5);
    assert.equal(gate.admitNotification(), false, "the bucket is empty");
    assert.equal(gate.admitRequest(), undefined);
    advance(9);
    assert.equal(gate.admitNotification(), false, "0.9 of a token is not one");
    advance(1);
    assert.ok(gate.admitNotification(), "10 ms at 100/s is one token");
    assert.equal(gate.admitRequest(), undefined);
    advance(50);
    admitAll(gate, 5);
    assert.equal(gate.admitRequest(), undefined);
    // A long quiet spell refills to the burst, not beyond it.
    advance(60_000);
    for (let i = 0; i < 10; i++) assert.ok(gate.admitNotification());
    assert.equal(gate.admitNotification(), false);
    assert.deepEqual(gate.dropped, { requests: 3, notifications: 3 });
    assert.equal(slots.length, 5);
  });

  test("S5: a flood costs a counter: a million dropped messages keep nothing", () => {
    const { gate } = setup({ maxInFlight: 2, burst: 4, ratePerSecond: 1 });
    const slots = admitAll(gate, 2);
    for (let i = 0; i < 500_000; i++) gate.admitRequest();
    for (let i = 0; i < 500_000; i++) gate.admitNotification();
    assert.equal(gate.inFlight, 2);
    assert.deepEqual(gate.dropped, { requests: 500_000, notifications: 500_000 - 2 });
    assert.equal(slots.length, 2);
  });

  test("D1: drops are reported at once, then at most once per interval, with the counts since the last report", () => {
    const { gate, reports, advance } = setup({ maxInFlight: 1, burst: 1, ratePerSecond: 1 });
    admitAll(gate, 1);
    gate.admitRequest();
    assert.deepEqual(reports, [{ requests: 1, notifications: 0 }], "the first drop is reported at once");
    for (let i = 0; i < 1_000; i++) gate.admitRequest();
    for (let i = 0; i < 500; i++) gate.admitNotification();
    assert.equal(reports.length, 1, "nothing more within the interval");
    advance(INBOUND_REPORT_INTERVAL_MS - 1);
    gate.admitRequest();
    assert.equal(reports.length, 1);
    advance(1);
    // The bucket refilled 1 token over the second: this notification is delivered, not dropped.
    assert.ok(gate.admitNotification());
    gate.admitNotification();
    assert.deepEqual(reports[1], { requests: 1_001, notifications: 501 });
    gate.admitRequest();
    gate.close();
    assert.deepEqual(reports[2], { requests: 1, notifications: 0 }, "close reports what is left");
    assert.equal(reports.length, 3);
  });

  test("D1: close reports nothing when nothing is left unreported", () => {
    const { gate, reports } = setup();
    gate.admitNotification();
    gate.close();
    assert.deepEqual(reports, []);
  });

  test("D2: a report listener that throws breaks nothing", () => {
    let now = 0;
    let calls = 0;
    const gate = new InboundGate(
      { now: () => now },
      () => {
        calls++;
        throw new Error("observer failed");
      },
      { ...INBOUND_LIMITS, burst: 1, maxInFlight: 1 },
    );
    assert.ok(gate.admitRequest());
    assert.equal(gate.admitRequest(), undefined);
    now += INBOUND_REPORT_INTERVAL_MS;
    assert.equal(gate.admitNotification(), true);
    assert.equal(gate.admitNotification(), false);
    assert.equal(calls, 2);
  });

  test("S5: close aborts every slot's signal with the reason, one listener each, and admits nothing after", () => {
    const { gate, reports } = setup();
    const slots = admitAll(gate, MAX_INBOUND_IN_FLIGHT);
    let heard = 0;
    for (const s of slots) s.signal.addEventListener("abort", () => heard++, { once: true });
    const released = slots.pop()!;
    released.release();
    assert.equal(released.signal.aborted, false);
    const reason = new Error("closed");
    gate.close(reason);
    gate.close(new Error("second"));
    assert.equal(heard, MAX_INBOUND_IN_FLIGHT - 1, "every slot still held is told once");
    assert.ok(slots.every((s) => s.signal.aborted && s.signal.reason === reason));
    assert.equal(gate.inFlight, 0);
    assert.equal(gate.admitRequest(), undefined);
    assert.equal(gate.admitNotification(), false);
    assert.deepEqual(gate.dropped, { requests: 0, notifications: 0 }, "after close nothing is counted");
    assert.deepEqual(reports, []);
    for (const s of slots) s.release();
  });
});
