import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "./redact.ts";
import { TetherError } from "./tether-error.ts";

const CANARY = "canary-7f3a9c2e-secret";

test("X2: a secret is redacted in plain, URL-encoded and base64 forms", () => {
  const r = new Redactor([`${CANARY}/+=`]);
  for (const form of [
    `${CANARY}/+=`,
    encodeURIComponent(`${CANARY}/+=`),
    Buffer.from(`${CANARY}/+=`).toString("base64"),
  ]) {
    assert.doesNotMatch(r.scrub(`before ${form} after`), /canary-7f3a9c2e/);
  }
});

test("X2: URLs and auth-scheme credentials are removed even when no secret is configured", () => {
  const r = new Redactor();
  const out = r.scrub("see https://host/path?token=abc and Authorization: Bearer abc.def-ghi");
  assert.doesNotMatch(out, /host\/path|abc\.def-ghi|token=abc/);
});

test("X2: server text is folded, redacted and truncated", () => {
  const r = new Redactor([CANARY]);
  const text = r.serverText(`line1\nline2 ${CANARY} ${"x".repeat(1000)}`);
  assert.ok(text);
  assert.ok(!text.includes("\n"));
  assert.ok(!text.includes(CANARY));
  assert.ok(text.length <= 301);
});

test("X1: toJSON carries the record's fields and nothing of the cause", () => {
  const cause = new Error(`upstream said ${CANARY} at https://secret.example/x`);
  const e = new TetherError({
    code: "upstream",
    reason: "http_502",
    stage: "http_request",
    phase: "discovery",
    message: "the server failed (HTTP 502)",
    httpStatus: 502,
    rpcMessage: `bad ${CANARY}`,
    cause,
    redactor: new Redactor([CANARY]),
  });
  const record = e.toJSON();
  assert.equal(record.type, "error");
  assert.equal(record.code, "upstream");
  assert.equal(record.httpStatus, 502);
  assert.equal(record.observedBytes, null);
  assert.equal(e.cause, cause);
  const text = JSON.stringify(record) + e.message;
  assert.ok(!text.includes(CANARY));
  assert.ok(!text.includes("secret.example"));
  assert.ok(!("stack" in record));
});

test("X3: the tool-result projection carries the record and a scrubbed text", () => {
  const e = new TetherError({
    code: "limit",
    reason: "response_too_large",
    stage: "call",
    phase: "call",
    message: `the reply passed the 10-byte ceiling ${CANARY}`,
    observedBytes: 11,
    limits: { maxBytes: 10 },
    effect: "unknown",
    redactor: new Redactor([CANARY]),
  });
  const result = e.toToolResult();
  assert.equal(result.isError, true);
  assert.equal(result.content[0].type, "text");
  assert.match(result.content[0].text, /will not help/);
  assert.deepEqual(result.structuredContent, e.toJSON());
  assert.ok(!JSON.stringify(result).includes(CANARY));
});

test("X2: a secret learned after construction is scrubbed by every holder, in its echoed forms too", () => {
  const redactor = new Redactor();
  const holder = { redactor };
  const token = "at-LEARNED-4f9c2e71b3";
  assert.equal(holder.redactor.scrub(`x ${token}`), `x ${token}`);
  redactor.learn([token, "ab"]);
  assert.equal(holder.redactor.scrub(`x ${token} y`), "x [redacted] y");
  const b64 = Buffer.from(token).toString("base64").replace(/=+$/, "");
  assert.equal(holder.redactor.scrub(b64), "[redacted]");
  assert.equal(holder.redactor.scrub("ab"), "ab", "too short to be searched for");
});
