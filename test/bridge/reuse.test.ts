// The bridge keeps the cancellation controllers of answered requests for later ones (an
// AbortSignal is the costliest object per bridged call). A reused one must cancel exactly like a
// fresh one, an aborted one must never come back, and nothing may pile up listeners on them.
// Contract IDs: S7 (a host's cancellation reaches the server), S5 (no runtime warning of ours).

import assert from "node:assert/strict";
import { test } from "node:test";
import { RawHost, SCRIPTED_SERVER } from "../helpers/bridge.ts";

const textOf = (m: Record<string, unknown>) =>
  ((m.result as { content: { text?: string }[] } | undefined)?.content[0]?.text ?? "") as string;

test("bridge S7 S5: after many answered calls, and after a cancelled one, a host's cancellation still reaches the server", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    await host.initialize();
    let n = 0;
    const calls = async (count: number) => {
      for (let i = 0; i < count; i++) {
        n++;
        // Results, tool errors and server errors alike end their requests.
        const name = n % 10 === 0 ? "nope" : "pid";
        const reply = await host.request(`c${n}`, "tools/call", { name, arguments: {} });
        assert.ok(name === "pid" ? reply.result : reply.error, `call ${n} answered`);
      }
    };
    const cancelled = async () => {
      const r = await host.request(`seen-${++n}`, "tools/call", { name: "seen", arguments: {} });
      return (JSON.parse(textOf(r)) as { cancelled: unknown[] }).cancelled.length;
    };
    const cancelOne = async (id: string, expected: number) => {
      host.send({ id, method: "tools/call", params: { name: "wait", arguments: {} } });
      // Upstream once a later request on the same line has been answered.
      await host.request(`after-${id}`, "ping");
      host.send({ method: "notifications/cancelled", params: { requestId: id, reason: "user" } });
      let seen = await cancelled();
      for (let i = 0; i < 50 && seen < expected; i++) seen = await cancelled();
      assert.equal(seen, expected, `the cancellation of ${id} reached the server`);
    };
    await calls(40);
    await cancelOne("w1", 1);
    await calls(20);
    await cancelOne("w2", 2);
    await calls(5);
    assert.ok(
      !host.received.some((m) => m.id === "w1" || m.id === "w2"),
      "cancelled requests are not answered",
    );
    assert.doesNotMatch(host.stderr, /Warning/);
  } finally {
    await host.end();
  }
});
