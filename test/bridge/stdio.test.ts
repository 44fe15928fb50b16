// `tether bridge` over stdio, driven by the official TypeScript clients as hosts, in front of the
// example fleet's servers of both eras: the host's era and the server's era differ, and every
// feature still arrives. Contract IDs: X2/X3 (errors reach the host typed and payload-free),
// N8 (eras never mix on the wire), M2 (notifications reach the host), S7 (cancellation crosses).

import assert from "node:assert/strict";
import { test } from "node:test";
import { Client as V1Client_2024 } from "mcp-sdk-2024-11-05/client/index.js";
import { StdioClientTransport as V1Stdio_2024 } from "mcp-sdk-2024-11-05/client/stdio.js";
import { bridgeCommand, RawHost, v1Host, v2Host } from "../helpers/bridge.ts";
import { useFleet } from "../helpers/fleet.ts";

const fleet = useFleet(["modern-2026-07-28", "streamable-2025-11-25-json", "legacy-stdio", "modern-stdio"]);

const stdioTarget = (name: "legacy-stdio" | "modern-stdio", extra: string[] = []) => {
  const s = fleet().stdioServer(name);
  return ["--", s.command, ...s.args, ...extra];
};

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content[0]?.text ?? "") as string;

test("bridge: a 2025 host (SDK 1.32) reaches a legacy stdio server: tools, resources, prompts", async () => {
  const { client } = await v1Host(stdioTarget("legacy-stdio"));
  try {
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "echo"));
    assert.equal(textOf(await client.callTool({ name: "echo", arguments: { message: "hi" } })), "hi");
    const read = await client.readResource({ uri: "demo://greeting" });
    assert.equal((read.contents[0] as { text: string }).text, "hello");
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    assert.equal((prompt.messages[0]!.content as { text: string }).text, "Hello, Ada!");
    assert.equal(client.getServerVersion()?.name, "tether-example");
  } finally {
    await client.close();
  }
});

test("bridge N8: a 2025 host (SDK 1.32) in front of a 2026-07-28-only stdio server", async () => {
  const { client } = await v1Host(stdioTarget("modern-stdio", ["--modern-only"]));
  try {
    assert.equal(textOf(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })), "5");
    const read = await client.readResource({ uri: "demo://greeting" });
    assert.equal((read.contents[0] as { text: string }).text, "hello");
    const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
    assert.equal((prompt.messages[0]!.content as { text: string }).text, "Hello, Ada!");
    await client.ping();
  } finally {
    await client.close();
  }
});

test("bridge N8: a 2026-07-28 host (client 2.4, pinned) in front of a legacy stdio server", async () => {
  const { client } = await v2Host(stdioTarget("legacy-stdio"), { pin: "2026-07-28" });
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "slow"));
    assert.equal(textOf(await client.callTool({ name: "echo", arguments: { message: "modern" } })), "modern");
    const read = await client.readResource({ uri: "demo://greeting" });
    assert.equal((read.contents[0] as { text: string }).text, "hello");
    const prompts = await client.listPrompts();
    assert.equal(prompts.prompts[0]?.name, "greet");
  } finally {
    await client.close();
  }
});

test("bridge: client 2.4 in auto mode, and in legacy mode, through the bridge to 2026-07-28 HTTP", async () => {
  const url = fleet().http("modern-2026-07-28").url;
  for (const mode of ["auto", "legacy"] as const) {
    const { client } = await v2Host([url], mode);
    try {
      assert.equal(textOf(await client.callTool({ name: "echo", arguments: { message: mode } })), mode);
    } finally {
      await client.close();
    }
  }
});

test("bridge: a 2024-11-05 host (SDK 1.0.4) in front of a 2026-07-28 HTTP server", async () => {
  const client = new V1Client_2024({ name: "old-host", version: "1" }, { capabilities: {} });
  await client.connect(new V1Stdio_2024({ ...bridgeCommand([fleet().http("modern-2026-07-28").url]) }));
  try {
    assert.equal(textOf(await client.callTool({ name: "echo", arguments: { message: "old" } })), "old");
  } finally {
    await client.close();
  }
});

test("bridge X2: a server's JSON-RPC error reaches the host with its own code; a tool error stays a result", async () => {
  const { client } = await v1Host([fleet().http("streamable-2025-11-25-json").url]);
  try {
    await assert.rejects(
      client.callTool({ name: "no-such-tool", arguments: {} }),
      (e: Error & { code?: number }) => {
        assert.equal(e.code, -32602);
        return true;
      },
    );
    const failed = await client.callTool({ name: "fail", arguments: {} });
    assert.equal(failed.isError, true);
  } finally {
    await client.close();
  }
});

test("bridge X2 X3: a timeout reaches the host as a JSON-RPC error whose data is the typed record", async () => {
  const host = new RawHost(["--call-timeout", "300", ...stdioTarget("legacy-stdio")]);
  try {
    await host.initialize();
    const reply = await host.request(2, "tools/call", { name: "slow", arguments: { ms: 30_000 } });
    const error = reply.error as { code: number; message: string; data: Record<string, unknown> };
    assert.equal(error.code, -32000);
    assert.equal(error.data.code, "timeout");
    assert.equal(error.data.type, "error");
    assert.equal(typeof error.data.reason, "string");
    assert.equal(error.data.effect, "unknown");
  } finally {
    await host.end();
  }
});

test("bridge K1: an unreachable target fails initialize with a typed error and one record on stderr", async () => {
  const host = new RawHost(["http://127.0.0.1:9/mcp?token=sekrit-in-query", "--discovery-timeout", "3000"]);
  const reply = await host.request("init", "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "h", version: "1" },
  });
  const error = reply.error as { code: number; data: Record<string, unknown>; message: string };
  assert.equal(error.data.code, "connection");
  const code = await host.exited;
  assert.equal(code, 3);
  const lines = host.stderr.trim().split("\n");
  assert.equal(lines.length, 1);
  const record = JSON.parse(lines[0]!);
  assert.equal(record.type, "error");
  assert.equal(record.code, "connection");
  assert.ok(!JSON.stringify(reply).includes("sekrit"));
  assert.ok(!host.stderr.includes("sekrit") && !host.stderr.includes("127.0.0.1:9"));
});
