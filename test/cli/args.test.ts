// Arguments follow the tool's input schema: `key=value` converted to the declared type, checked
// before tools/call is sent (a `config` error with the closest names), enum members in `tools`
// signatures, and `--args-file -` reading stdin, bounded.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, describe, test } from "node:test";
import { CLI_BIN, errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { startStdioScript } from "../helpers/hostile.ts";

/** A server with a schema of every kind; it records each method it receives. */
const server = startStdioScript(`
const tools = [
  { name: "get-sum", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false } },
  { name: "get-sums", inputSchema: { type: "object", properties: {} } },
  { name: "shape", inputSchema: { type: "object", properties: {
      n: { type: "integer" }, on: { type: "boolean" }, level: { type: "string", enum: ["error", "debug"] },
      tags: { type: "array" }, note: { type: "string" } }, required: ["n"] } },
];
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools } });
  if (m.method === "tools/call") return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify(m.params.arguments) }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());
const stdio = () => ["--", server.command, ...server.args];

/** The methods the last server process received. */
function methods(): string[] {
  const pids = server.pids();
  return server.received(pids.at(-1)!);
}

function withStdin(
  args: string[],
  input: string | Buffer,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env: { ...process.env, NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("schema-guided arguments", () => {
  const fleet = useFleet(["everything-stdio", "modern-2026-07-28"]);

  test("K1: get-sum a=2 b=3 against server-everything converts to numbers and answers 5", async () => {
    const s = fleet().stdioServer("everything-stdio");
    const run = await runCli(["call", "get-sum", "a=2", "b=3", "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\b5\b/);
    assert.equal(run.stderr, "");
  });

  test("K1: tools shows enum members in signatures (server-everything)", async () => {
    const s = fleet().stdioServer("everything-stdio");
    const run = await runCli(["tools", "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /get-sum\(a: number, b: number\)/);
    assert.match(run.stdout, /"error"\|"success"\|"debug"/);
  });

  test("K1: integer, boolean and enum values are converted; key:=json and text stay as written; one tools/list", async () => {
    const run = await runCli([
      "call",
      "shape",
      "n=7",
      "on=true",
      "level=debug",
      "tags:=[1]",
      "note=42",
      "--json",
      ...stdio(),
    ]);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { content: { text: string }[] };
    assert.deepEqual(JSON.parse(result.content[0]!.text), {
      n: 7,
      on: true,
      level: "debug",
      tags: [1],
      note: "42",
    });
    assert.equal(methods().filter((m) => m === "tools/list").length, 1);
  });

  test("K1: a value that does not fit, a missing argument, an unknown name: config errors, tools/call never sent", async () => {
    const cases: [string[], string, RegExp][] = [
      [["get-sum", "a=two", "b=3"], "invalid_argument", /a takes number/],
      [["shape", "n=1.5"], "invalid_argument", /n takes integer/],
      [["shape", "n=1", "level=loud"], "invalid_argument", /"error"\|"debug"/],
      [["get-sum", "a=2"], "missing_argument", /needs b/],
      [["get-sum", "a=2", "bb=3"], "unknown_argument", /did you mean b\?/],
      [["get-summ", "a=2", "b=3"], "unknown_tool", /did you mean get-sum/],
    ];
    for (const [words, reason, message] of cases) {
      const run = await runCli(["call", ...words, ...stdio()]);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, "");
      const record = errorRecord(run);
      assert.equal(record.code, "config");
      assert.equal(record.reason, reason, run.stderr);
      assert.match(String(record.message), message);
      assert.ok(!methods().includes("tools/call"), `${words.join(" ")}: tools/call was sent`);
    }
  });

  test("K1: the value given is never echoed in an error", async () => {
    const run = await runCli(["call", "get-sum", "a=SECRET-VALUE-123", "b=3", ...stdio()]);
    assert.equal(run.code, 2);
    assert.ok(!run.stderr.includes("SECRET-VALUE-123"));
  });

  test("K1: --args-file - reads the arguments from stdin; more than 1 MiB is refused", async () => {
    const ok = await withStdin(
      ["call", "get-sum", "--args-file", "-", "--json", ...stdio()],
      '{"a":2,"b":3}',
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /\\"a\\":2/);
    const big = await withStdin(
      ["call", "get-sum", "--args-file", "-", ...stdio()],
      Buffer.alloc(1024 * 1024 + 10, 0x20),
    );
    assert.equal(big.code, 2, big.stderr);
    assert.equal(JSON.parse(big.stderr.trim()).reason, "invalid_args");
  });

  test("K1: against an HTTP fleet server, a typed call works the same way", async () => {
    const url = fleet().http("modern-2026-07-28").url;
    const tools = await runCli(["tools", url, "--json"]);
    assert.equal(tools.code, 0, tools.stderr);
    const wrong = await runCli(["call", url, "no-such-tool-xyz"]);
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.equal(errorRecord(wrong).reason, "unknown_tool");
  });
});

test("K1: a server that cannot list its tools gets the arguments as written (the schema is unknown)", async () => {
  const bare = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "b", version: "1" } } });
  if (m.method === "tools/call") return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify(m.params.arguments) }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
  try {
    const run = await runCli(["call", "anything", "a=2", "--", bare.command, ...bare.args]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '{"a":"2"}\n');
  } finally {
    bare.dispose();
  }
});
