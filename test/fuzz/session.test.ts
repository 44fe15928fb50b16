// Model-based fuzzing of the JSON-RPC session (src/jsonrpc/session.ts) over an in-memory
// transport: arbitrary interleavings of requests, aborts, replies (to ids sent, never sent or
// abandoned; duplicates; id-null errors; over-budget sizes), notifications, server requests of any
// method, oversized unsolicited frames, a failing transport and close(). After every step the
// session is compared with a small model of what the contract says must have happened.
//
// Properties (C1, C2, C5, P4, P6): every request settles exactly once, and with what the model
// predicts; nothing the session does throws out of the transport's delivery; closure settles every
// pending request with one closure error, the first cause wins, later messages are ignored; the
// pending map holds exactly the unsettled requests (seen through frameCeiling()).

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { closedError } from "../../src/errors/failures.ts";
import { baseRedactor } from "../../src/errors/redact.ts";
import { RpcReplyError } from "../../src/errors/rpc-reply-error.ts";
import { TetherError } from "../../src/errors/tether-error.ts";
import { INBOUND_LIMITS } from "../../src/jsonrpc/inbound-gate.ts";
import {
  asMessage,
  isFailure,
  isNotification,
  isRequest,
  type JsonObject,
  type JsonRpcMessage,
} from "../../src/jsonrpc/messages.ts";
import { Session } from "../../src/jsonrpc/session.ts";
import { FakeTransport } from "./fake-transport.ts";
import { fuzz } from "./fuzz-config.ts";
import { messageLike } from "./rpc-values.ts";

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------- actions

type Body = Record<string, unknown>;

type Action =
  /** A request; whether its send fails is drawn separately (`sendFailures`, by step). */
  | { t: "request"; maxBytes: number; cancelOnAbort: boolean; preAborted: boolean }
  | { t: "abort"; k: number }
  /**
   * A reply to a request's id (the k-th, counting round), to an id never sent, or to a string
   * twin of it. `near`: its size is the target's own ceiling plus -1, 0 or 1 instead of `bytes`.
   */
  | {
      t: "reply";
      k: number;
      unsent: boolean;
      stringId: boolean;
      body: Body;
      bytes: number;
      near: number | null;
    }
  | { t: "nullError"; code: number; bytes: number }
  | { t: "message"; raw: Body; bytes: number }
  | { t: "notify"; method: string; bytes: number; near: number | null }
  | { t: "serverRequest"; method: string; id: string | number; bytes: number; near: number | null }
  /** Several server requests (or notifications) in a row, to fill the inbound gate's slots and bucket. */
  | { t: "burst"; method: string; count: number; notify: boolean }
  | { t: "transportFail" }
  | { t: "close" };

const size = fc.integer({ min: 1, max: 72 });
/** Sizes right at a ceiling come up often: -1, 0 or +1 from it, or none (use `bytes`). */
const nearCeiling = fc.option(fc.integer({ min: -1, max: 1 }), { freq: 2 });
const near = (ceiling: number, offset: number | null, bytes: number) =>
  offset === null ? bytes : Math.max(1, ceiling + offset);
const resultBody: fc.Arbitrary<Body> = fc.record({
  result: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
});
const errorBody: fc.Arbitrary<Body> = fc.record({
  error: fc.record({ code: fc.integer({ min: -32800, max: 100 }), message: fc.string({ maxLength: 5 }) }),
});
/** A result with stray fields beside it that a reply should not carry. */
const strayBody: fc.Arbitrary<Body> = fc
  .tuple(
    resultBody,
    fc.record(
      {
        error: fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
        method: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([r, stray]) => ({ ...r, ...stray }));
/** Bodies of any shape: the fields of messageLike, whatever they hold (the id is set by the action). */
const oddBody: fc.Arbitrary<Body> = messageLike.map(({ id: _id, ...rest }) => rest);

const serverMethod = fc.oneof(
  fc.constantFrom("ping", "ok/echo", "fail/boom", "hang/forever", "sampling/createMessage", "roots/list"),
  fc.string({ maxLength: 8 }),
);

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant("request" as const),
      maxBytes: size,
      cancelOnAbort: fc.boolean(),
      preAborted: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("abort" as const), k: fc.nat({ max: 12 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant("reply" as const),
      k: fc.nat({ max: 12 }),
      unsent: fc.constantFrom(false, false, false, true),
      stringId: fc.constantFrom(false, false, false, true),
      near: nearCeiling,
      body: fc.oneof(
        { weight: 3, arbitrary: resultBody },
        { weight: 2, arbitrary: errorBody },
        { weight: 1, arbitrary: strayBody },
        { weight: 1, arbitrary: oddBody },
      ),
      bytes: size,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("nullError" as const), code: fc.integer(), bytes: size }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("message" as const),
      raw: messageLike,
      bytes: size,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant("notify" as const),
      method: fc.constantFrom("notifications/message", "notifications/progress", "boom"),
      bytes: size,
      near: nearCeiling,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("serverRequest" as const),
      method: serverMethod,
      id: fc.oneof(fc.nat({ max: 20 }), fc.string({ maxLength: 3 })),
      bytes: size,
      near: nearCeiling,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("burst" as const),
      method: fc.constantFrom("hang/forever", "ok/echo", "ping", "other"),
      count: fc.integer({ min: 1, max: 20 }),
      /** Notifications instead of requests (they share the inbound bucket). */
      notify: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ t: "transportFail" as const }) },
  { weight: 1, arbitrary: fc.constant({ t: "close" as const }) },
);

const scenario = fc.record({
  actions: fc.array(action, { maxLength: 40 }),
  sendFailures: fc.array(fc.boolean(), { maxLength: 40 }),
  maxFrameBytes: size,
  serves: fc.boolean(),
  open: fc.boolean(),
  careless: fc.boolean(),
  /** The inbound gate's bounds: small ones often, so drops happen; the defaults sometimes. */
  inbound: fc.oneof(
    fc.record({ maxInFlight: fc.integer({ min: 1, max: 20 }), burst: fc.integer({ min: 1, max: 60 }) }),
    fc.constant({ maxInFlight: INBOUND_LIMITS.maxInFlight, burst: INBOUND_LIMITS.burst }),
  ),
});

// ---------------------------------------------------------------- model

type Expected =
  | { kind: "pending" }
  | { kind: "resolve"; result: unknown; bytes: number }
  | { kind: "reject"; check: (error: unknown) => void };

interface Tracked {
  id: number | undefined;
  maxBytes: number;
  cancelOnAbort: boolean;
  controller: AbortController;
  reason: Error;
  expected: Expected;
  actual: { kind: "resolve"; value: unknown } | { kind: "reject"; error: unknown } | undefined;
  settlements: number;
}

function serve(name: string): Promise<JsonObject> | undefined {
  // Admitted messages can carry a method that is no string (see decode.test.ts); String() keeps
  // this fake from failing on them itself.
  const method = String(name);
  if (method.startsWith("ok/")) return Promise.resolve({ echoed: method });
  if (method.startsWith("fail/")) return Promise.reject(new Error("handler failed"));
  if (method.startsWith("hang/")) return new Promise<JsonObject>(() => {});
  return undefined;
}

/** Deep-copies through JSON, as a message off the wire would be. */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

async function run(s: {
  actions: Action[];
  sendFailures: boolean[];
  maxFrameBytes: number;
  serves: boolean;
  open: boolean;
  careless: boolean;
  inbound: { maxInFlight: number; burst: number };
}): Promise<void> {
  const transport = new FakeTransport(s.careless);
  const session = new Session(transport, {
    redactor: baseRedactor,
    maxFrameBytes: s.maxFrameBytes,
    serve: s.serves ? (method) => serve(method) : undefined,
    // Time stands still: the inbound bucket holds its burst for the whole run, never refilled.
    clock: { now: () => 0 },
    inboundLimits: { ...INBOUND_LIMITS, ...s.inbound },
  });
  if (s.open) {
    session.markOpen();
    session.phase = "call";
    session.stage = "call";
  }
  const notified: string[] = [];
  const expectedNotified: string[] = [];
  session.notifications.add((n) => {
    notified.push(n.method);
    if (n.method === "boom") throw new Error("a listener that throws");
  });

  const requests: Tracked[] = [];
  let nextId = 1;
  /** The inbound gate: tokens left, handlers that never answer (slots held for good). */
  let tokens = s.inbound.burst;
  let hanging = 0;
  let closure: TetherError | undefined;
  let closing: Promise<void> | undefined;
  let sentSeen = 0;
  const pending = () => requests.filter((r) => r.expected.kind === "pending");

  const closeModel = (check: (c: TetherError) => void) => {
    const c = session.closure;
    assert.ok(c instanceof TetherError, "a closed session names its closure error");
    check(c);
    closure = c;
    for (const r of pending()) r.expected = { kind: "reject", check: (e) => assert.equal(e, c) };
  };

  const settleExpected = (r: Tracked, m: JsonRpcMessage, bytes: number) => {
    if (bytes > r.maxBytes) {
      r.expected = {
        kind: "reject",
        check: (e) => {
          assert.ok(e instanceof TetherError, `over budget: ${String(e)}`);
          assert.equal(e.code, "limit");
          assert.equal(e.reason, "response_too_large");
          assert.equal(e.observedBytes, bytes);
        },
      };
    } else if (isFailure(m)) {
      r.expected = {
        kind: "reject",
        check: (e) => {
          assert.ok(e instanceof RpcReplyError, `an error reply: ${String(e)}`);
          assert.deepEqual(e.error, m.error);
        },
      };
    } else {
      r.expected = { kind: "resolve", result: "result" in m ? m.result : undefined, bytes };
    }
  };

  /**
   * What the session must do with one admitted message: the answers it must send at once go to
   * `now`, those a handler's promise produces go to `later` (sent after the step's synchronous ones).
   * A server request holds a slot until its answer's send settles: within one step (a burst is
   * delivered synchronously) nothing settles, so every request admitted in the step holds one.
   */
  let admittedThisStep = 0;
  let hangingThisStep = 0;
  const receive = (m: JsonRpcMessage, bytes: number, now: Body[], later: Body[]): void => {
    if (closure) return;
    if ((isRequest(m) || isNotification(m)) && bytes > s.maxFrameBytes) {
      closeModel((c) => {
        assert.equal(c.code, "limit");
        assert.equal(c.reason, "frame_too_large");
        assert.equal(c.observedBytes, bytes);
      });
      return;
    }
    if (isRequest(m)) {
      // Past the bound on work in flight, or with the bucket empty: dropped unanswered.
      if (hanging + admittedThisStep >= s.inbound.maxInFlight || tokens < 1) return;
      tokens--;
      admittedThisStep++;
      if (m.method === "ping") {
        now.push({ jsonrpc: "2.0", id: m.id, result: {} });
        return;
      }
      // A result that also carries `method`: the guards call it a request (see decode.test.ts).
      const kind = s.serves ? String(m.method).split("/")[0] : undefined;
      if (kind === "hang") hangingThisStep++;
      if (kind === "ok") {
        later.push({ jsonrpc: "2.0", id: m.id, result: { echoed: m.method } });
      } else if (kind === "fail") {
        later.push({
          jsonrpc: "2.0",
          id: m.id,
          error: { code: -32603, message: "The client could not answer" },
        });
      } else if (kind !== "hang") {
        now.push({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
      }
      return;
    }
    if (isNotification(m)) {
      // Notifications share the bucket; past it they are dropped.
      if (tokens < 1) return;
      tokens--;
      expectedNotified.push(m.method);
      return;
    }
    let target: Tracked | undefined;
    if (m.id === null) {
      const p = pending();
      if (isFailure(m) && p.length === 1) target = p[0];
    } else {
      target = pending().find((r) => r.id === m.id);
    }
    if (target) settleExpected(target, m, bytes);
  };

  const check = async (step: string, expectedSends: Body[]) => {
    await flush();
    // Answers sent in the step have settled by now and given back their slots; handlers that
    // never answer keep theirs.
    hanging += hangingThisStep;
    hangingThisStep = 0;
    admittedThisStep = 0;
    const sends = transport.sent.slice(sentSeen).map((x) => wire(x.message));
    sentSeen = transport.sent.length;
    assert.deepEqual(sends, wire(expectedSends), `${step}: what the session sent`);
    for (const [k, r] of requests.entries()) {
      assert.ok(r.settlements <= 1, `request ${k} settled ${r.settlements} times`);
      if (r.expected.kind === "pending") {
        assert.equal(r.actual, undefined, `${step}: request ${k} should still be pending`);
        continue;
      }
      assert.ok(r.actual, `${step}: request ${k} should have settled (${r.expected.kind})`);
      if (r.expected.kind === "resolve") {
        assert.equal(r.actual.kind, "resolve", `${step}: request ${k} should resolve`);
        assert.deepEqual(r.actual.value, { result: r.expected.result, bytes: r.expected.bytes });
      } else {
        assert.equal(r.actual.kind, "reject", `${step}: request ${k} should reject`);
        r.expected.check(r.actual.error);
      }
    }
    const ceiling = Math.max(s.maxFrameBytes, ...pending().map((r) => r.maxBytes));
    assert.equal(
      session.frameCeiling(),
      ceiling,
      `${step}: the pending map holds exactly the unsettled requests`,
    );
    assert.deepEqual(notified, expectedNotified, `${step}: notifications handed on`);
    if (closure) {
      assert.equal(session.closure, closure, "the first closure cause wins");
      assert.ok(session.state === "closing" || session.state === "closed");
      assert.equal(transport.closeCalls, 1, "the transport is closed exactly once");
      assert.equal(transport.listenerCount, 0, "the session's listeners are removed");
    } else {
      assert.equal(session.closure, undefined);
      assert.equal(transport.closeCalls, 0);
    }
  };

  for (const [n, a] of s.actions.entries()) {
    const step = `step ${n} (${a.t})`;
    const sends: Body[] = [];
    const later: Body[] = [];
    switch (a.t) {
      case "request": {
        const controller = new AbortController();
        const reason = new Error(`abort ${requests.length}`);
        const r: Tracked = {
          id: undefined,
          maxBytes: a.maxBytes,
          cancelOnAbort: a.cancelOnAbort,
          controller,
          reason,
          expected: { kind: "pending" },
          actual: undefined,
          settlements: 0,
        };
        requests.push(r);
        if (a.preAborted) controller.abort(reason);
        const fails = !closure && !a.preAborted && (s.sendFailures[n] ?? false);
        const sendError = new Error("send failed");
        if (fails) transport.failNextRequest = sendError;
        const c = closure;
        if (c) r.expected = { kind: "reject", check: (e) => assert.equal(e, c) };
        else if (a.preAborted) r.expected = { kind: "reject", check: (e) => assert.equal(e, reason) };
        else {
          r.id = nextId++;
          sends.push({ jsonrpc: "2.0", id: r.id, method: "tools/call", params: { k: requests.length - 1 } });
          if (fails) r.expected = { kind: "reject", check: (e) => assert.equal(e, sendError) };
        }
        session
          .request(
            "tools/call",
            { k: requests.length - 1 },
            {
              signal: controller.signal,
              maxBytes: a.maxBytes,
              cancelOnAbort: a.cancelOnAbort,
            },
          )
          .then(
            (value) => {
              r.settlements++;
              r.actual = { kind: "resolve", value };
            },
            (error: unknown) => {
              r.settlements++;
              r.actual = { kind: "reject", error };
            },
          );
        transport.failNextRequest = undefined;
        break;
      }
      case "abort": {
        const r = requests[a.k % Math.max(1, requests.length)];
        if (!r) break;
        if (r.expected.kind === "pending") {
          r.expected = { kind: "reject", check: (e) => assert.equal(e, r.reason) };
          if (r.cancelOnAbort && !closure)
            sends.push({
              jsonrpc: "2.0",
              method: "notifications/cancelled",
              params: { requestId: r.id, reason: "cancelled by the client" },
            });
        }
        r.controller.abort(r.reason);
        break;
      }
      case "reply":
      case "nullError":
      case "message": {
        let raw: Body;
        let bytes = a.bytes;
        if (a.t === "reply") {
          const r = a.unsent ? undefined : requests[a.k % Math.max(1, requests.length)];
          const id = r?.id ?? 10_000 + a.k;
          raw = { jsonrpc: "2.0", ...a.body, id: a.stringId ? String(id) : id };
          bytes = near(r?.maxBytes ?? s.maxFrameBytes, a.near, a.bytes);
        } else if (a.t === "nullError") {
          raw = { jsonrpc: "2.0", id: null, error: { code: a.code, message: "no id" } };
        } else raw = a.raw;
        // The transport hands on only what decoding admits, as the real ones do.
        const m = asMessage(wire(raw));
        if (!m) break;
        transport.deliver(m, bytes);
        receive(m, bytes, sends, later);
        break;
      }
      case "notify":
      case "serverRequest": {
        const m: JsonRpcMessage =
          a.t === "notify"
            ? { jsonrpc: "2.0", method: a.method, params: {} }
            : { jsonrpc: "2.0", id: a.id, method: a.method, params: {} };
        const bytes = near(s.maxFrameBytes, a.near, a.bytes);
        transport.deliver(m, bytes);
        receive(m, bytes, sends, later);
        break;
      }
      case "burst": {
        for (let i = 0; i < a.count; i++) {
          const m: JsonRpcMessage = a.notify
            ? { jsonrpc: "2.0", method: `notifications/${a.method}`, params: {} }
            : { jsonrpc: "2.0", id: `burst-${n}-${i}`, method: a.method, params: {} };
          transport.deliver(m, 1);
          receive(m, 1, sends, later);
        }
        break;
      }
      case "transportFail": {
        const error = closedError({ stage: "call", phase: "call" }, "eof", "the fake transport ended");
        const first = !closure;
        transport.fail(error);
        if (first)
          closeModel((c) => {
            assert.equal(c.code, "connection");
            assert.equal(c.closure, "eof");
            assert.ok(c === error || c.cause === error, "the closure error carries the transport's failure");
          });
        break;
      }
      case "close": {
        const first = !closure;
        const p = session.close();
        closing ??= p;
        assert.equal(p, closing, "every close() gets the same promise");
        if (first)
          closeModel((c) => {
            assert.equal(c.code, "connection");
            assert.equal(c.closure, "closed_by_client");
          });
        break;
      }
    }
    await check(step, [...sends, ...later]);
  }

  // Closing at the end settles whatever is left, exactly once.
  const first = !closure;
  await session.close();
  if (first) closeModel((c) => assert.equal(c.closure, "closed_by_client"));
  await check("final close", []);
  for (const [k, r] of requests.entries())
    assert.equal(r.settlements, 1, `request ${k} settled exactly once`);
  await assert.rejects(
    session.request("late", undefined, {
      signal: new AbortController().signal,
      maxBytes: 10,
      cancelOnAbort: false,
    }),
    (e) => e === closure,
  );
}

test("C1, C2, C5, P4, P6: every request settles exactly once, as the model says, whatever the server sends and whenever the session closes", async () => {
  await fc.assert(fc.asyncProperty(scenario, run), fuzz(400, 5));
});
