// Property-based fuzzing of frame decoding and message admission (src/jsonrpc/decode.ts,
// src/jsonrpc/messages.ts): arbitrary bytes, strings and JSON values, huge numbers, 100k-deep
// nesting, ids of every type and batches with one bad member. Every input ends in
// { ok: true, messages } or { ok: false, reason }, never a throw, and whatever is admitted
// satisfies the type guards the session relies on.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { type DecodeResult, decodeFrame, decodeText } from "../../src/jsonrpc/decode.ts";
import {
  asMessage,
  asMessages,
  isFailure,
  isNotification,
  isRefused,
  isRequest,
  isResponse,
  type JsonRpcMessage,
} from "../../src/jsonrpc/messages.ts";
import { utf8 } from "./chunks.ts";
import { fuzz } from "./fuzz-config.ts";
import { anyId, deepText, hugeNumberText, messageLike, validMessage } from "./rpc-values.ts";

const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown) => typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v));

/** What the session assumes of every admitted message. */
function assertWellFormed(m: JsonRpcMessage): void {
  assert.equal(m.jsonrpc, "2.0");
  const kinds = [isRequest(m), isNotification(m), isResponse(m)].filter(Boolean).length;
  assert.equal(kinds, 1, "exactly one of request, notification, response");
  if (isRequest(m) || isNotification(m)) {
    assert.equal(typeof m.method, "string");
    assert.ok(m.params === undefined || isObject(m.params), "params, if any, is an object");
    if (isRequest(m)) assert.ok(isId(m.id), `request id ${JSON.stringify(m.id)}`);
    return;
  }
  if (isRefused(m)) {
    // A reply refused for its depth: only the id it answers and what kind of answer it was.
    assert.ok(isId(m.id), `refused reply id ${JSON.stringify(m.id)}`);
    assert.deepEqual(Object.keys(m).sort(), ["answered", "id", "jsonrpc", "refused"]);
    return;
  }
  if (isFailure(m)) {
    assert.ok(m.id === null || isId(m.id), `error id ${JSON.stringify(m.id)}`);
    assert.ok(Number.isInteger(m.error.code), `error code ${m.error.code}`);
    assert.equal(typeof m.error.message, "string");
    return;
  }
  assert.ok(isId(m.id), `result id ${JSON.stringify(m.id)}`);
  assert.ok("result" in m && isObject(m.result), "result is an object");
}

function assertOutcome(r: DecodeResult): void {
  if (r.ok) {
    assert.ok(r.messages.length > 0, "an admitted frame holds at least one message");
    for (const m of r.messages) assertWellFormed(m);
  } else {
    assert.ok(["invalid_utf8", "invalid_json", "not_jsonrpc", "too_deep"].includes(r.reason), r.reason);
  }
}

test("decodeFrame ends every byte sequence in ok or a reason, never a throw; what it admits is well-formed", () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc.string({ unit: "binary", maxLength: 40 }).map(utf8),
    messageLike.map((m) => utf8(JSON.stringify(m))),
    // Valid JSON with one byte flipped or cut: mostly invalid, sometimes still JSON.
    fc.tuple(messageLike, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([m, at, b]) => {
      const u = utf8(JSON.stringify(m));
      if (u.byteLength > 0) u[at % u.byteLength] = b;
      return u;
    }),
  );
  fc.assert(
    fc.property(bytes, (b: Uint8Array) => {
      const r = decodeFrame(b);
      assertOutcome(r);
      let strict = true;
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(b);
      } catch {
        strict = false;
      }
      if (!strict) assert.deepEqual(r, { ok: false, reason: "invalid_utf8" });
    }),
    fuzz(3000),
  );
});

test("decodeText ends every string in ok or a reason: garbage, huge numbers, ids of every type", () => {
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    messageLike.map((m) => JSON.stringify(m)),
    fc
      .tuple(hugeNumberText, fc.constantFrom("id", "code", "result", "params"))
      .map(([n, field]) =>
        field === "id"
          ? `{"jsonrpc":"2.0","id":${n},"result":{}}`
          : field === "code"
            ? `{"jsonrpc":"2.0","id":1,"error":{"code":${n},"message":"m"}}`
            : `{"jsonrpc":"2.0","id":1,"${field}":{"n":${n}}}`,
      ),
  );
  fc.assert(
    fc.property(text, (t: string) => assertOutcome(decodeText(t))),
    fuzz(3000),
  );
});

test("asMessage admits exactly the well-formed messages, whatever type each field has", () => {
  fc.assert(
    fc.property(messageLike, (value: Record<string, unknown>) => {
      // Through JSON, as the wire would carry it (undefined fields vanish, -0 becomes 0).
      const wire = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
      const m = asMessage(wire);
      if (m) assertWellFormed(m);
      // Every id of a request must be a string or a safe integer; anything else is refused.
      if (typeof wire.method === "string" && "id" in wire && !isId(wire.id)) assert.equal(m, undefined);
      if (wire.jsonrpc !== "2.0") assert.equal(m, undefined);
    }),
    fuzz(3000),
  );
});

test("asMessages takes a batch whole or not at all: one bad member refuses it, wherever it sits", () => {
  fc.assert(
    fc.property(
      fc.array(validMessage, { minLength: 1, maxLength: 6 }),
      fc.option(fc.tuple(fc.nat(), fc.oneof(messageLike, anyId, fc.jsonValue({ maxDepth: 1 })))),
      (members: Record<string, unknown>[], bad: [number, unknown] | null) => {
        const batch: unknown[] = [...members];
        // Judged as the wire carries it: inside an array, JSON drops undefined fields.
        const onWire = bad && (JSON.parse(JSON.stringify([bad[1]])) as unknown[])[0];
        const badOne = bad && asMessage(onWire) === undefined ? bad : null;
        if (badOne) batch.splice(badOne[0] % (batch.length + 1), 0, badOne[1]);
        const r = decodeText(JSON.stringify(batch));
        assertOutcome(r);
        if (badOne) assert.deepEqual(r, { ok: false, reason: "not_jsonrpc" });
        else {
          assert.ok(r.ok, "a batch of valid messages is admitted");
          assert.equal(r.messages.length, members.length);
        }
      },
    ),
    fuzz(2000),
  );
  assert.deepEqual(decodeText("[]"), { ok: false, reason: "not_jsonrpc" });
  assert.equal(asMessages([]), undefined);
});

test("100k-deep nesting anywhere in a frame is decoded or refused, never thrown", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(10_000, 100_000),
      fc.constantFrom("array" as const, "object" as const),
      fc.constantFrom("bare" as const, "result" as const, "params" as const, "id" as const),
      fc.boolean(),
      (depth: number, kind: "array" | "object", where: "bare" | "result" | "params" | "id", cut: boolean) => {
        let text = deepText(depth, kind, where);
        if (cut) text = text.slice(0, -1);
        assertOutcome(decodeText(text));
        assertOutcome(decodeFrame(utf8(text)));
      },
    ),
    fuzz(16, 500),
  );
  // An array nested 100k deep as a batch member: refused for its depth before it is parsed.
  assert.deepEqual(decodeText(`[${deepText(100_000, "array", "bare")}]`), {
    ok: false,
    reason: "too_deep",
  });
});
