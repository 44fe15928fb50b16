import assert from "node:assert/strict";
import { test } from "node:test";
import { HttpRejection } from "../errors/http-rejection.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { RpcReplyError } from "../errors/rpc-reply-error.ts";
import { TetherError } from "../errors/tether-error.ts";
import { classifyProbe } from "./era-evidence.ts";
import { legacyTerms } from "./legacy-handshake.ts";
import { encodeHeaderValue, headerParamsOf, modernHeaders } from "./modern-headers.ts";
import { atLeast, bestCommon, eraOf, rank } from "./versions.ts";

test("N1: versions are ordered by the table, and unknown strings rank nowhere", () => {
  assert.ok(rank("2025-06-18") > rank("2025-03-26"));
  assert.equal(rank("2025-13-99"), -1);
  assert.equal(atLeast("9999-99-99", "2024-11-05"), false);
  assert.equal(eraOf("2026-07-28"), "modern");
  assert.equal(eraOf("2025-11-25"), "legacy");
  assert.equal(bestCommon(["2026-07-28", "2025-11-25", "2099-01-01"], "2025-11-25"), "2025-11-25");
  assert.equal(bestCommon(["2099-01-01"], "2026-07-28"), undefined);
});

const rpc = (code: number, data?: unknown) => new RpcReplyError({ code, message: "m", data: data as never });
const http = (status: number, kind: HttpRejection["bodyKind"], code?: number, data?: unknown) =>
  new HttpRejection(
    status,
    kind,
    code === undefined ? undefined : { code, message: "m", data: data as never },
    undefined,
    10,
  );

test("N5: the probe classifier, row by row", () => {
  const rows: [string, Parameters<typeof classifyProbe>[0], string][] = [
    ["discover result", { result: { supportedVersions: ["2026-07-28"] } }, "modern"],
    [
      "a result that is no DiscoverResult (a legacy server answering every method with {})",
      { result: {} },
      "legacy",
    ],
    ["-32022 with data.supported in-band", { error: rpc(-32022, { supported: ["2026-07-28"] }) }, "modern"],
    ["-32022 without data.supported", { error: rpc(-32022) }, "legacy"],
    ["-32601 in-band (also inside an HTTP 200)", { error: rpc(-32601) }, "legacy"],
    ["-32602 in-band", { error: rpc(-32602) }, "legacy"],
    ["-32000 in-band", { error: rpc(-32000) }, "legacy"],
    ["400 empty", { error: http(400, "empty") }, "legacy"],
    ["400 text/plain", { error: http(400, "text") }, "legacy"],
    ["400 non-JSON-RPC JSON", { error: http(400, "json") }, "legacy"],
    [
      "400 -32000 'Unsupported protocol version' from a legacy stateless server",
      { error: http(400, "jsonrpc", -32000) },
      "legacy",
    ],
    ["404 invalid session", { error: http(404, "jsonrpc", -32001) }, "legacy"],
    ["405 with a JSON-RPC body as text/plain", { error: http(405, "jsonrpc", -32000) }, "legacy"],
    [
      "400 -32022 with supported",
      { error: http(400, "jsonrpc", -32022, { supported: ["2026-07-28"] }) },
      "modern",
    ],
    ["400 -32020 header mismatch", { error: http(400, "jsonrpc", -32020) }, "modern"],
    ["401", { error: http(401, "jsonrpc", -32600) }, "none"],
    ["403", { error: http(403, "empty") }, "none"],
    ["429", { error: http(429, "empty") }, "none"],
    ["500", { error: http(500, "text") }, "none"],
    ["503", { error: http(503, "jsonrpc", -32022, { supported: ["x"] }) }, "modern"],
    ["silent stdio probe", { error: new Interrupt("stage", "probe_timeout", 100) }, "legacy"],
    ["overall deadline", { error: new Interrupt("deadline", "deadline_exceeded", 100) }, "none"],
    ["caller cancellation", { error: new Interrupt("caller", "cancelled") }, "none"],
    [
      "stdio server exits before initialize",
      {
        error: new TetherError({
          code: "connection",
          reason: "closed",
          closure: "process_exit",
          stage: "probe",
          phase: "discovery",
          message: "x",
        }),
      },
      "legacy",
    ],
    [
      "DNS failure",
      {
        error: new TetherError({
          code: "connection",
          reason: "dns",
          stage: "probe",
          phase: "discovery",
          message: "x",
        }),
      },
      "none",
    ],
  ];
  for (const [name, input, era] of rows) assert.equal(classifyProbe(input).era, era, name);
  const silent = classifyProbe({ error: new Interrupt("stage", "probe_timeout", 100) });
  assert.ok(silent.era === "legacy" && silent.fresh, "N6: a silent probe needs a fresh process");
  const answered = classifyProbe({ error: rpc(-32601) });
  assert.ok(answered.era === "legacy" && !answered.fresh, "an answered probe leaves the process reusable");
});

test("N8: a legacy session tells its transport the version header from 2025-06-18 on, and that it keeps a session", () => {
  assert.deepEqual(legacyTerms("2024-11-05"), { headers: {}, stateless: false });
  assert.deepEqual(legacyTerms("2025-03-26"), { headers: {}, stateless: false });
  assert.deepEqual(legacyTerms("2025-06-18"), {
    headers: { "mcp-protocol-version": "2025-06-18" },
    stateless: false,
  });
  assert.deepEqual(legacyTerms("2025-11-25").headers, { "mcp-protocol-version": "2025-11-25" });
});

test("N8: header values are encoded per the spec's table", () => {
  const table: [value: string, encoded: string][] = [
    ["us-west1", "us-west1"],
    ["Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["line1\nline2", "=?base64?bGluZTEKbGluZTI=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ];
  for (const [value, encoded] of table)
    assert.equal(encodeHeaderValue(value), encoded, JSON.stringify(value));
});

test("N8: modern requests mirror method, name and x-mcp-header arguments into headers", () => {
  const schema = {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      nested: { type: "object", properties: { n: { type: "integer", "x-mcp-header": "N" } } },
      query: { type: "string" },
    },
  };
  const params = headerParamsOf(schema);
  assert.deepEqual(params, [
    { header: "Region", path: ["region"] },
    { header: "N", path: ["nested", "n"] },
  ]);
  const h = modernHeaders(
    "2026-07-28",
    "tools/call",
    { name: "execute_sql", arguments: { region: "us-west1", nested: { n: 42 } } },
    params,
  );
  assert.equal(h["mcp-protocol-version"], "2026-07-28");
  assert.equal(h["mcp-method"], "tools/call");
  assert.equal(h["mcp-name"], "execute_sql");
  assert.equal(h["mcp-param-region"], "us-west1");
  assert.equal(h["mcp-param-n"], "42");
  assert.equal(
    modernHeaders("2026-07-28", "resources/read", { uri: "file:///é" })["mcp-name"],
    encodeHeaderValue("file:///é"),
  );
});

test("N8: invalid x-mcp-header annotations are detected (the tool is left out on HTTP)", () => {
  assert.equal(headerParamsOf({ properties: { a: { type: "number", "x-mcp-header": "A" } } }), undefined);
  assert.equal(
    headerParamsOf({ properties: { a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } } }),
    undefined,
  );
  assert.equal(
    headerParamsOf({
      properties: { a: { type: "string", "x-mcp-header": "A" }, b: { type: "string", "x-mcp-header": "a" } },
    }),
    undefined,
  );
  assert.equal(
    headerParamsOf({ properties: { a: { type: "string", "x-mcp-header": "bad name" } } }),
    undefined,
  );
  assert.deepEqual(headerParamsOf({ type: "object" }), []);
});
