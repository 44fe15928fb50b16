// What crossing the bridge does to a message, checked without processes: the host's envelope
// removed, results shaped for each era, capabilities as a host may rely on them, and a failure as
// the JSON-RPC error a host receives (X2: payload-free; N8: eras never mix on the wire).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "../errors/redact.ts";
import { RpcReplyError } from "../errors/rpc-reply-error.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import {
  capabilitiesFor,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  resultFor,
  rpcErrorFor,
  withoutEnvelope,
} from "./translate.ts";

test("N8: a modern host's envelope is removed before forwarding; its other _meta keys stay", () => {
  const params = {
    name: "echo",
    _meta: {
      [META_PROTOCOL_VERSION]: "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "h", version: "1" },
      progressToken: 7,
    },
  };
  assert.deepEqual(withoutEnvelope(params), { name: "echo", _meta: { progressToken: 7 } });
  assert.deepEqual(withoutEnvelope({ _meta: { [META_PROTOCOL_VERSION]: "2026-07-28" } }), {});
});

test("N8: a host's __proto__ key crosses as a key, never as the copy's prototype", () => {
  const params = JSON.parse(
    `{"name":"x","__proto__":{"name":"y"},"_meta":{"${META_PROTOCOL_VERSION}":"2026-07-28","__proto__":{"a":1}}}`,
  );
  const out = withoutEnvelope(params)!;
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(Object.getPrototypeOf(out._meta), Object.prototype);
  assert.equal(JSON.stringify(out), '{"name":"x","__proto__":{"name":"y"},"_meta":{"__proto__":{"a":1}}}');
});

test("N8: results carry the 2026-07-28 fields for a modern host and lose them for a legacy one", () => {
  const info = { name: "s", version: "1" };
  const modern = resultFor("modern", "tools/list", { tools: [] }, info);
  assert.equal(modern.resultType, "complete");
  assert.equal(modern.ttlMs, 0);
  assert.equal(modern.cacheScope, "private");
  assert.deepEqual((modern._meta as Record<string, unknown>)[META_SERVER_INFO], info);
  const legacy = resultFor(
    "legacy",
    "tools/list",
    {
      tools: [],
      resultType: "complete",
      ttlMs: 5,
      cacheScope: "public",
      _meta: { [META_SERVER_INFO]: info },
    },
    info,
  );
  assert.deepEqual(legacy, { tools: [] });
});

test("N8: a legacy host in front of a modern server is not promised list changes or subscriptions", () => {
  const caps = {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    extensions: {},
  };
  assert.deepEqual(capabilitiesFor("legacy", "modern", caps), { tools: {}, resources: {} });
  assert.deepEqual(capabilitiesFor("legacy", "legacy", caps), {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
  });
});

test("X2: a server's JSON-RPC error keeps its code; other failures are -32000 with the typed record", () => {
  const redactor = new Redactor(["tok-secret-123"]);
  const remote = new TetherError({
    code: "remote_error",
    reason: "rpc_error",
    stage: "call",
    phase: "call",
    message: "the server answered with JSON-RPC error -32602",
    rpcCode: -32602,
    rpcMessage: "Unknown tool: x (token tok-secret-123)",
  });
  const e1 = rpcErrorFor(remote, redactor);
  assert.equal(e1.code, -32602);
  assert.ok(!JSON.stringify(e1).includes("tok-secret-123"));
  const timeout = new TetherError({
    code: "timeout",
    reason: "deadline_exceeded",
    stage: "call",
    phase: "call",
    message: "no reply within the 300 ms call budget",
    effect: "unknown",
    limits: { timeoutMs: 300 },
  });
  const e2 = rpcErrorFor(timeout, redactor);
  assert.equal(e2.code, -32000);
  const data = e2.data as Record<string, unknown>;
  assert.equal(data.code, "timeout");
  assert.equal(data.reason, "deadline_exceeded");
  assert.equal(data.effect, "unknown");
  const internal = rpcErrorFor(new Error("https://user:pw@example.com/x?key=abc"), redactor);
  assert.equal((internal.data as Record<string, unknown>).code, "internal");
  assert.ok(!JSON.stringify(internal).includes("example.com"));
});

test("X2: a server's -32042 reaches the host with its checked URL elicitations, and no other URL", () => {
  const redactor = new Redactor(["tok-secret-123"]);
  const required = toPublicError(
    new RpcReplyError({
      code: -32042,
      message: "URL elicitation required",
      data: {
        elicitations: [
          {
            mode: "url",
            elicitationId: "a",
            url: "https://u:p@auth.example.com/c?t=tok-secret-123",
            message: "Sign in.",
          },
          { mode: "url", elicitationId: "b", url: "javascript:alert(1)", message: "x" },
        ],
      },
    }),
    { stage: "call", phase: "call", redactor },
  );
  const e = rpcErrorFor(required, redactor);
  assert.equal(e.code, -32042);
  const data = e.data as Record<string, unknown>;
  assert.deepEqual(data.elicitations, [
    { mode: "url", elicitationId: "a", url: "https://auth.example.com/c?t=[redacted]", message: "Sign in." },
  ]);
  assert.equal(data.urlsRequired, 1);
  assert.ok(!JSON.stringify(e).includes("tok-secret-123"));
});
