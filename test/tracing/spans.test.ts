// connect({ tracing }) with OpenTelemetry's own SDK recording in memory: the establishment's span
// tree (connect > attempt > its stages, and the prefetched listing), a CLIENT span per request
// named and attributed as the semantic conventions for MCP say, the W3C trace context the server
// received in `_meta` (SEP-414) naming the request's own span, `error.type` with the public code,
// the `mcp.client.operation.duration` histogram, and no secret, argument or server text anywhere.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { propagation, type TextMapPropagator } from "@opentelemetry/api";
import { DataPointType } from "@opentelemetry/sdk-metrics";
import type { Client } from "../../src/index.ts";
import { connect, TetherError } from "../../src/index.ts";
import { CANARIES, CANARY_QUERY } from "../helpers/canaries.ts";
import { type ExampleServer, startExampleServer } from "../helpers/hostile.ts";
import { assertClean, type ReadableSpan, recorder, spanText, treeOf } from "./recording.ts";

const META_SERVER = fileURLToPath(new URL("../fixtures/tracing/meta-server.mjs", import.meta.url));

/** The meta server over stdio, holding the env canary; an argument carries the bearer canary. */
function stdio(extra: object = {}) {
  return {
    command: process.execPath,
    args: [META_SERVER, "stdio"],
    env: { TETHER_ECHO_KEY: CANARIES.env },
    ...extra,
  };
}

/** What the meta server received: each request's method and `_meta`. */
async function received(client: Client): Promise<{ method: string; meta: Record<string, unknown> | null }[]> {
  const result = await client.callTool("meta", { text: CANARIES.bearer });
  const first = result.content[0];
  assert.ok(first && first.type === "text");
  return (JSON.parse(first.text) as { received: { method: string; meta: Record<string, unknown> | null }[] })
    .received;
}

const byName = (spans: ReadableSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  assert.ok(found.length > 0, `a span named ${name} among ${spans.map((s) => s.name).join(", ")}`);
  return found;
};

test("the establishment is one span with its attempt and stages; each request a CLIENT span named and attributed as the conventions say", async () => {
  const rec = recorder();
  const client = await connect(stdio({ tracing: rec.options, prefetchTools: true }));
  let seen: Awaited<ReturnType<typeof received>>;
  try {
    seen = await received(client);
  } finally {
    await client.close();
  }
  const spans = rec.spans();
  assert.deepEqual(treeOf(spans).slice(0, 7), [
    "connect",
    "  attempt",
    "    spawn",
    "    probe",
    "    initialize",
    "    initialized",
    "    tools/list",
  ]);
  const [root] = byName(spans, "connect");
  assert.equal(root!.parentSpanContext, undefined, "the establishment is the root here");
  assert.equal(root!.attributes["network.transport"], "pipe");
  assert.equal(root!.attributes["mcp.protocol.version"], client.protocolVersion);
  const [attempt] = byName(spans, "attempt");
  assert.equal(attempt!.attributes["tether.attempt"], 1);

  const [call] = byName(spans, "tools/call meta");
  assert.equal(call!.kind, 2, "SpanKind.CLIENT");
  assert.equal(call!.parentSpanContext, undefined, "a request after establishment has the caller's context");
  assert.deepEqual(call!.attributes, {
    "mcp.method.name": "tools/call",
    "gen_ai.tool.name": "meta",
    "gen_ai.operation.name": "execute_tool",
    "mcp.protocol.version": client.protocolVersion,
    "network.transport": "pipe",
    "jsonrpc.request.id": call!.attributes["jsonrpc.request.id"],
  });
  assert.match(String(call!.attributes["jsonrpc.request.id"]), /^\d+$/);
  const [list] = byName(spans, "tools/list");
  assert.equal(list!.kind, 2);
  assert.equal(
    list!.parentSpanContext?.spanId,
    attempt!.spanContext().spanId,
    "the prefetched listing is a stage of the attempt",
  );

  // The server got each request's own span as its parent (SEP-414 `traceparent` in `_meta`).
  const traceparent = (sp: ReadableSpan) => `00-${sp.spanContext().traceId}-${sp.spanContext().spanId}-01`;
  assert.deepEqual(
    seen.map((r) => [r.method, r.meta?.traceparent]),
    [
      ["tools/list", traceparent(list!)],
      ["tools/call", traceparent(call!)],
    ],
  );
  assertClean(spans);
});

test("a failure gives error.type the public code (and the JSON-RPC code), status ERROR, and none of the server's text", async () => {
  const rec = recorder();
  const client = await connect(stdio({ tracing: rec.options }));
  try {
    await assert.rejects(client.callTool("fail", { text: CANARIES.bearer }), { code: "remote_error" });
    const toolError = await client.callTool("tool-error", {});
    assert.equal(toolError.isError, true);
    await assert.rejects(client.callTool("slow", {}, { timeoutMs: 200 }), { code: "timeout" });
  } finally {
    await client.close();
  }
  const spans = rec.spans();
  const [fail] = byName(spans, "tools/call fail");
  assert.equal(fail!.attributes["error.type"], "remote_error");
  assert.equal(fail!.attributes["rpc.response.status_code"], "-32000");
  assert.equal(fail!.status.code, 2, "SpanStatusCode.ERROR");
  assert.equal(fail!.status.message, "remote_error: rpc_error");
  const [toolError] = byName(spans, "tools/call tool-error");
  assert.equal(toolError!.attributes["error.type"], "tool_error");
  assert.equal(toolError!.status.code, 2);
  const [slow] = byName(spans, "tools/call slow");
  assert.equal(slow!.attributes["error.type"], "timeout");
  assert.equal(slow!.status.code, 2);
  const ok = spans.filter((s) => s.name === "connect" || s.name === "attempt");
  for (const s of ok) assert.equal(s.attributes["error.type"], undefined, `${s.name} succeeded`);
  assertClean(spans);
});

test("a failed establishment ends its span with the error's code, and its failed stage says where", async () => {
  const rec = recorder();
  await assert.rejects(
    connect({
      command: "/nonexistent/tether-tracing-server",
      env: { K: CANARIES.env },
      tracing: rec.options,
    }),
    (e: unknown) => e instanceof TetherError && e.stage === "spawn",
  );
  const spans = rec.spans();
  assert.deepEqual(treeOf(spans), ["connect", "  attempt", "    spawn"]);
  for (const name of ["connect", "attempt", "spawn"]) {
    const [s] = byName(spans, name);
    assert.equal(s!.attributes["error.type"], "connection", name);
    assert.equal(s!.status.code, 2, name);
  }
  assertClean(spans);
});

test("mcp.client.operation.duration is a histogram in seconds, per method and outcome", async () => {
  const rec = recorder();
  const client = await connect(stdio({ tracing: rec.options }));
  try {
    await client.callTool("meta", {});
    await assert.rejects(client.callTool("fail", {}), { code: "remote_error" });
  } finally {
    await client.close();
  }
  const metric = await rec.metric("mcp.client.operation.duration");
  assert.equal(metric.descriptor.unit, "s");
  assert.equal(metric.dataPointType, DataPointType.HISTOGRAM);
  const points = metric.dataPoints.map((p) => ({ attributes: p.attributes, count: p.value.count }));
  const meta = points.find((p) => p.attributes["gen_ai.tool.name"] === "meta");
  const fail = points.find((p) => p.attributes["gen_ai.tool.name"] === "fail");
  assert.equal(meta?.count, 1);
  assert.equal(meta?.attributes["error.type"], undefined);
  assert.equal(meta?.attributes["mcp.method.name"], "tools/call");
  assert.equal(meta?.attributes["network.transport"], "pipe");
  assert.equal(fail?.attributes["error.type"], "remote_error");
  for (const p of metric.dataPoints) {
    assert.equal(p.attributes["jsonrpc.request.id"], undefined, "no per-request attribute on the metric");
    assert.ok(p.value.sum >= 0 && p.value.sum < 60, `a duration in seconds: ${p.value.sum}`);
  }
});

test("the application's registered propagators add their fields to _meta beside the trace context", async () => {
  const rec = recorder();
  const baggage: TextMapPropagator = {
    inject: (_context, carrier, setter) => setter.set(carrier, "baggage", "tenant=blue"),
    extract: (context) => context,
    fields: () => ["baggage"],
  };
  propagation.setGlobalPropagator(baggage);
  try {
    const client = await connect(stdio({ tracing: rec.options }));
    try {
      const [seen] = await received(client);
      assert.equal(seen?.meta?.baggage, "tenant=blue");
      assert.match(String(seen?.meta?.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    } finally {
      await client.close();
    }
  } finally {
    propagation.disable();
  }
});

test("tracing on with no provider registered records nothing and sends no trace context", async () => {
  const client = await connect(stdio({ tracing: true }));
  try {
    const seen = await received(client);
    assert.deepEqual(seen, [{ method: "tools/call", meta: null }]);
  } finally {
    await client.close();
  }
});

test("a tracing option that is neither a switch nor providers is a config error, before any I/O", async () => {
  await assert.rejects(connect(stdio({ tracing: "yes" })), { code: "config", reason: "invalid_option" });
  await assert.rejects(connect(stdio({ tracing: { tracerProvider: {} } })), {
    code: "config",
    reason: "invalid_option",
  });
});

let http: ExampleServer | undefined;
before(async () => {
  http = await startExampleServer(META_SERVER, ["http"]);
});
after(async () => {
  await http?.close();
});

test("over Streamable HTTP: tcp, the server's host and port (never its path or query), the session id; no header or query secret", async () => {
  const rec = recorder();
  const url = new URL(http!.url);
  const client = await connect({
    url: `${http!.url}?${CANARY_QUERY}`,
    headers: { "X-Api-Key": CANARIES.header, Authorization: `Bearer ${CANARIES.bearer}` },
    transport: "streamable-http",
    tracing: rec.options,
  });
  try {
    await assert.rejects(client.callTool("fail", {}), { code: "remote_error" });
    const seen = await received(client);
    assert.match(String(seen.at(-1)?.meta?.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  } finally {
    await client.close();
  }
  const spans = rec.spans();
  const [call] = byName(spans, "tools/call meta");
  assert.equal(call!.attributes["network.transport"], "tcp");
  assert.equal(call!.attributes["network.protocol.name"], "http");
  assert.equal(call!.attributes["server.address"], url.hostname);
  assert.equal(call!.attributes["server.port"], Number(url.port));
  assert.match(String(call!.attributes["mcp.session.id"]), /^[0-9a-f-]{36}$/);
  for (const s of spans) assert.doesNotMatch(spanText(s), /\/mcp|key=/, `${s.name} names no path or query`);
  assertClean(spans);
});
