import assert from "node:assert/strict";
import { test } from "node:test";
import { closedError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { Cancellation } from "../lifecycle/cancellation.ts";
import { TransportBase } from "../transport/transport.ts";
import type { SendContext } from "./channel.ts";
import type { JsonRpcMessage } from "./messages.ts";
import { Session } from "./session.ts";

/** An in-memory transport: records what is sent; the test plays the server. */
class FakeTransport extends TransportBase {
  readonly mode = "stdio" as const;
  sent: JsonRpcMessage[] = [];
  closes = 0;
  async start(): Promise<void> {}
  async send(message: JsonRpcMessage, _ctx: SendContext): Promise<void> {
    this.sent.push(message);
  }
  reply(message: JsonRpcMessage): void {
    this.emitMessage(message, JSON.stringify(message).length);
  }
  drop(error: TetherError): void {
    this.fail(error);
  }
  close(): Promise<void> {
    this.closes++;
    return Promise.resolve();
  }
}

const options = { redactor: new Redactor(), maxFrameBytes: 1 << 20 };
const never = () => new AbortController().signal;

/** An open session over `t`, and a tools/call on it bounded by a Cancellation that asks for a notice. */
function cancellableCall(t: FakeTransport) {
  const s = new Session(t, options);
  s.markOpen();
  const cancellation = new Cancellation();
  const pending = s.request("tools/call", undefined, {
    signal: cancellation,
    maxBytes: 100,
    cancelOnAbort: true,
  });
  return { s, cancellation, pending };
}

/** What the transport was handed, by JSON-RPC method ("reply" for an answer of ours). */
const sentMethods = (t: FakeTransport) => t.sent.map((m) => ("method" in m ? m.method : "reply"));

test("C1: a session goes connecting → open → closing → closed, and closed is terminal", async () => {
  const t = new FakeTransport();
  const s = new Session(t, options);
  assert.equal(s.state, "connecting");
  s.markOpen();
  assert.equal(s.state, "open");
  const closing = s.close();
  assert.equal(s.state, "closing");
  await closing;
  assert.equal(s.state, "closed");
  s.markOpen();
  assert.equal(s.state, "closed", "nothing reopens a closed session");
  await assert.rejects(
    s.request("tools/list", undefined, { signal: never(), maxBytes: 100, cancelOnAbort: false }),
    TetherError,
  );
  assert.equal(t.closes, 1, "C5: the transport is closed exactly once");
  await s.close();
  assert.equal(t.closes, 1);
});

test("C1/C2: the first closure cause wins, and every pending waiter gets that one error", async () => {
  const t = new FakeTransport();
  const s = new Session(t, options);
  s.markOpen();
  const a = s.request("a", undefined, { signal: never(), maxBytes: 100, cancelOnAbort: false });
  const b = s.request("b", undefined, { signal: never(), maxBytes: 100, cancelOnAbort: false });
  const first = closedError({ stage: "call", phase: "call" }, "eof", "the server closed its output");
  t.drop(first);
  void s.close(closedError({ stage: "call", phase: "call" }, "reset", "a later cause"));
  const [ea, eb] = await Promise.allSettled([a, b]);
  assert.equal(ea.status, "rejected");
  assert.equal(eb.status, "rejected");
  const reasonA = (ea as PromiseRejectedResult).reason as TetherError;
  assert.equal(reasonA, (eb as PromiseRejectedResult).reason, "one closure error for all waiters");
  assert.equal(reasonA.closure, "eof", "the first cause, not the later one");
  assert.equal(s.closure, reasonA);
  // A reply arriving after closure is ignored, not delivered to anyone.
  t.reply({ jsonrpc: "2.0", id: 1, result: {} });
});

/** A transport that records each send's context too. */
class RecordingTransport extends FakeTransport {
  contexts: SendContext[] = [];
  override async send(message: JsonRpcMessage, ctx: SendContext): Promise<void> {
    this.contexts.push(ctx);
    await super.send(message, ctx);
  }
}

test("S7, P7: a request bounded by a cancellation rejects with its reason and tells the server, without an AbortSignal", async () => {
  const t = new RecordingTransport();
  const { s, cancellation, pending } = cancellableCall(t);
  assert.equal(t.contexts[0]?.cancel, cancellation, "the transport can watch it as it is");
  const reason = new Interrupt("caller", "cancelled");
  cancellation.abort(reason);
  await assert.rejects(pending, (e) => e === reason);
  await s.close();
  assert.deepEqual(sentMethods(t), ["tools/call", "notifications/cancelled"]);
});

test("S7: a request answered before its cancellation aborts sends no cancellation notice", async () => {
  const t = new FakeTransport();
  const { s, cancellation, pending } = cancellableCall(t);
  t.reply({ jsonrpc: "2.0", id: 1, result: { ok: true } });
  assert.deepEqual((await pending).result, { ok: true });
  // The settled request stopped watching: a later abort (the call's clock firing late) is silent.
  cancellation.abort(new Interrupt("deadline", "deadline_exceeded", 1));
  const later = s.request("ping", undefined, { signal: never(), maxBytes: 100, cancelOnAbort: false });
  t.reply({ jsonrpc: "2.0", id: 2, result: {} });
  await later;
  assert.deepEqual(sentMethods(t), ["tools/call", "ping"]);
});

test("C2: closing settles a request bounded by a cancellation with the closure error, and stops watching it", async () => {
  const t = new FakeTransport();
  const { s, cancellation, pending } = cancellableCall(t);
  void s.close();
  await assert.rejects(pending, (e) => e instanceof TetherError && e.closure === "closed_by_client");
  cancellation.abort(new Interrupt("caller", "cancelled"));
  assert.deepEqual(sentMethods(t), ["tools/call"]);
});
