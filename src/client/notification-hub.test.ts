import assert from "node:assert/strict";
import { test } from "node:test";
import { NotificationHub } from "./notification-hub.ts";

function manual() {
  const queue: (() => void)[] = [];
  return {
    schedule: (run: () => void) => void queue.push(run),
    flush: () => {
      for (const run of queue.splice(0)) run();
    },
  };
}

test("M2: delivery is deferred, by method and to `*`, and unsubscribing is idempotent", () => {
  const q = manual();
  const hub = new NotificationHub(q.schedule);
  const seen: string[] = [];
  const off = hub.on("notifications/message", (n) => void seen.push(`exact:${n.method}`));
  hub.on("*", (n) => void seen.push(`any:${n.method}`));
  hub.dispatch({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } });
  hub.dispatch({ jsonrpc: "2.0", method: "notifications/other" });
  assert.deepEqual(seen, [], "nothing runs on the receive path");
  q.flush();
  assert.deepEqual(seen, [
    "exact:notifications/message",
    "any:notifications/message",
    "any:notifications/other",
  ]);
  off();
  off();
  assert.equal(hub.size, 1);
});

test("M2: a handler that throws, rejects or never settles does not stop the others", () => {
  const q = manual();
  const hub = new NotificationHub(q.schedule);
  const seen: number[] = [];
  hub.on("m", () => {
    throw new Error("boom");
  });
  hub.on("m", () => Promise.reject(new Error("later")));
  hub.on("m", () => new Promise<void>(() => {}));
  hub.on("m", () => void seen.push(1));
  hub.dispatch({ jsonrpc: "2.0", method: "m" });
  q.flush();
  assert.deepEqual(seen, [1]);
});

test("M2: a handler removed before delivery is not called; one added after arrival does not see it", () => {
  const q = manual();
  const hub = new NotificationHub(q.schedule);
  const seen: string[] = [];
  const off = hub.on("m", () => void seen.push("removed"));
  hub.dispatch({ jsonrpc: "2.0", method: "m" });
  off();
  hub.on("m", () => void seen.push("late"));
  q.flush();
  assert.deepEqual(seen, []);
});
