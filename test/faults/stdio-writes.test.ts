// How the stdio transport writes (CONTRACT M1, S7, C5): messages sent in one turn of the event
// loop after its first are held and written together at the end of the turn. Real child
// processes check what that must not change: every message arrives, in order, even when close()
// follows in the same turn (a cancellation notice sent just before closing still reaches the
// server before its input ends); replies to many requests sent at once each reach their own
// request; and held messages count towards back-pressure, so a server that stops reading makes
// senders wait instead of letting the client hold without bound.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Redactor } from "../../src/errors/redact.ts";
import { Session } from "../../src/jsonrpc/session.ts";
import { Cancellation } from "../../src/lifecycle/cancellation.ts";
import { StdioTransport } from "../../src/transport/stdio.ts";
import { type StdioScript, startStdioScript } from "../helpers/hostile.ts";

const scripts: StdioScript[] = [];
after(() => {
  for (const s of scripts) s.dispose();
});

function transportFor(script: StdioScript): StdioTransport {
  return new StdioTransport({
    command: script.command,
    args: script.args,
    stderr: "ignore",
    maxLineBytes: 1 << 20,
    redactor: new Redactor(),
  });
}

/** Lets the event loop run `turns` times (no timers: each turn is one `setImmediate`). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

test("S7, C5: messages sent in one turn right before close() all reach the server, in order, before its input ends", async () => {
  const script = startStdioScript(`
    onMessage(() => {});
  `);
  scripts.push(script);
  const transport = transportFor(script);
  await transport.start(new AbortController().signal);
  const signal = new AbortController().signal;
  const sends: Promise<void>[] = [];
  for (let i = 0; i < 50; i++)
    sends.push(
      transport.send(
        { jsonrpc: "2.0", method: "notifications/n", params: { i } },
        { signal, maxBytes: 1024 },
      ),
    );
  await transport.close();
  await Promise.all(sends);
  const log = script.log();
  // The prelude's server exits when its input ends: a message written after that would be lost.
  const received = log.flatMap((e) =>
    e.event === "recv" ? [(e.message?.params as { i: number } | undefined)?.i] : [],
  );
  assert.deepEqual(
    received,
    Array.from({ length: 50 }, (_, i) => i),
  );
});

test("M1: replies to 200 requests sent in one turn each settle their own request", async () => {
  const script = startStdioScript(`
    onMessage((m) => {
      if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, result: { i: m.params.i } });
    });
  `);
  scripts.push(script);
  const transport = transportFor(script);
  await transport.start(new AbortController().signal);
  const session = new Session(transport, { redactor: new Redactor(), maxFrameBytes: 1 << 20 });
  session.markOpen();
  try {
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        session.request("echo", { i }, { signal: new Cancellation(), maxBytes: 1024, cancelOnAbort: true }),
      ),
    );
    assert.deepEqual(
      replies.map((r) => r.result.i),
      Array.from({ length: 200 }, (_, i) => i),
    );
  } finally {
    await session.close();
  }
});

test("M1: held messages count towards back-pressure: sends to a server that stops reading wait", async () => {
  // The server never reads its input, so the pipe fills and stays full.
  const script = startStdioScript(`
    log({ event: "ready" });
    setInterval(() => {}, 1000);
  `);
  scripts.push(script);
  const transport = transportFor(script);
  await transport.start(new AbortController().signal);
  const signal = new AbortController().signal;
  const filler = "x".repeat(10_000);
  let resolved = 0;
  const sends: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    const sent = transport.send(
      { jsonrpc: "2.0", method: "notifications/n", params: { i, filler } },
      { signal, maxBytes: 1024 },
    );
    sent.then(
      () => resolved++,
      () => {},
    );
    sends.push(sent);
  }
  await turns(20);
  // 2 MB were sent; a pipe holds far less, and stdin's own high-water mark is 16 KiB.
  assert.ok(resolved < 200, `${resolved} of 200 sends resolved against a full pipe`);
  await transport.close("failure");
  const outcomes = await Promise.allSettled(sends);
  assert.ok(
    outcomes.some((o) => o.status === "rejected"),
    "the sends still waiting fail with the closure",
  );
});
