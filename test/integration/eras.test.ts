// One real server of every era and transport (the example fleet): the client negotiates what
// each speaks, exposes it, and works the same way on all of them.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Client, type ConnectOptions, connect, type Era, type TransportMode } from "../../src/index.ts";
import { type Fleet, type ServerName, useFleet } from "../helpers/fleet.ts";

const CONNECT_TIMEOUT_MS = 40_000;
const CALL_TIMEOUT_MS = 10_000;

interface Case {
  /** Shown in test names. */
  label: string;
  server: ServerName;
  transport?: ConnectOptions["transport"];
  expected: { protocolVersion: string; era: Era; transportMode: TransportMode };
}

const CASES: Case[] = [
  {
    label: "legacy SSE, auto",
    server: "legacy-sse-2024-11-05",
    expected: { protocolVersion: "2024-11-05", era: "legacy", transportMode: "sse" },
  },
  {
    label: "legacy SSE, explicit transport sse",
    server: "legacy-sse-2024-11-05",
    transport: "sse",
    expected: { protocolVersion: "2024-11-05", era: "legacy", transportMode: "sse" },
  },
  {
    label: "Streamable HTTP 2025-06-18",
    server: "streamable-2025-06-18",
    expected: { protocolVersion: "2025-06-18", era: "legacy", transportMode: "streamable-http" },
  },
  {
    label: "Streamable HTTP 2025-11-25, SSE replies",
    server: "streamable-2025-11-25-sse",
    expected: { protocolVersion: "2025-11-25", era: "legacy", transportMode: "streamable-http" },
  },
  {
    label: "Streamable HTTP 2025-11-25, JSON replies",
    server: "streamable-2025-11-25-json",
    expected: { protocolVersion: "2025-11-25", era: "legacy", transportMode: "streamable-http" },
  },
  {
    label: "modern Streamable HTTP 2026-07-28",
    server: "modern-2026-07-28",
    expected: { protocolVersion: "2026-07-28", era: "modern", transportMode: "streamable-http" },
  },
  {
    label: "legacy stdio",
    server: "legacy-stdio",
    expected: { protocolVersion: "2025-11-25", era: "legacy", transportMode: "stdio" },
  },
  {
    label: "modern stdio",
    server: "modern-stdio",
    expected: { protocolVersion: "2026-07-28", era: "modern", transportMode: "stdio" },
  },
  {
    label: "server-everything stdio",
    server: "everything-stdio",
    expected: { protocolVersion: "2025-11-25", era: "legacy", transportMode: "stdio" },
  },
];

function targetOf(fleet: Fleet, c: Case): ConnectOptions {
  const http = fleet.servers.find((s) => s.name === c.server);
  if (http) return { url: http.url, ...(c.transport ? { transport: c.transport } : {}) };
  const stdio = fleet.stdioServer(c.server as Parameters<Fleet["stdioServer"]>[0]);
  // The era is what is checked here, not the probe limit: on a loaded machine a node server may
  // take longer than the default limit to answer, and a silent probe rightly means "legacy".
  return { command: stdio.command, args: stdio.args, probeTimeoutMs: 30_000 };
}

function textOf(result: { content: unknown[] }): string {
  const first = result.content[0] as { type?: unknown; text?: unknown } | undefined;
  assert.equal(first?.type, "text", "the first content block is text");
  assert.equal(typeof first?.text, "string");
  return first.text as string;
}

const fleetOf = useFleet();

for (const c of CASES) {
  describe(`${c.label} (${c.server})`, () => {
    let client: Client | undefined;
    const ready = () => {
      assert.ok(client, "connect() did not return a client (see the N7 test's failure)");
      return client;
    };

    before(async () => {
      client = await connect({ ...targetOf(fleetOf(), c), timeoutMs: CONNECT_TIMEOUT_MS });
    });
    after(async () => {
      await client?.close();
    });

    test(`N7: exposes the negotiated version, era and transport (${c.label})`, () => {
      const cl = ready();
      assert.deepEqual(
        { protocolVersion: cl.protocolVersion, era: cl.era, transportMode: cl.transportMode },
        c.expected,
      );
      assert.equal(cl.state, "open");
    });

    test(`Q2: lists the tools of a server this project did not write, echo among them (${c.label})`, async () => {
      const tools = await ready().listTools({ timeoutMs: CALL_TIMEOUT_MS });
      const names = tools.map((t) => t.name);
      assert.ok(names.includes("echo"), `echo missing from ${names.join(", ")}`);
      const echo = tools.find((t) => t.name === "echo");
      assert.equal(typeof echo?.inputSchema, "object");
    });

    test(`Q2: calls echo on a real SDK server and returns its text (${c.label})`, async () => {
      const message = `hello from ${c.server} ✓`;
      const result = await ready().callTool("echo", { message }, { timeoutMs: CALL_TIMEOUT_MS });
      assert.notEqual(result.isError, true);
      // The reference server prefixes its echo; the fleet's own fixture returns the message as is.
      const expected = c.server === "everything-stdio" ? `Echo: ${message}` : message;
      assert.equal(textOf(result), expected);
    });

    if (c.server !== "everything-stdio") {
      test(`reports a tool's own failure as a result with isError, not a thrown error (${c.label})`, async () => {
        const result = await ready().callTool("fail", {}, { timeoutMs: CALL_TIMEOUT_MS });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /failed/);
      });
    }

    test(`C5: close() resolves, is shared, and leaves the session closed (${c.label})`, async () => {
      const cl = ready();
      const first = cl.close();
      assert.equal(cl.close(), first, "every close() call gets the same promise");
      await first;
      assert.equal(cl.state, "closed");
    });
  });
}

describe("N8: eras never mix on the wire (headers seen by the server)", () => {
  async function whoami(url: string): Promise<Record<string, string>> {
    const client = await connect({ url, timeoutMs: CONNECT_TIMEOUT_MS });
    try {
      const result = await client.callTool("whoami", {}, { timeoutMs: CALL_TIMEOUT_MS });
      assert.notEqual(result.isError, true);
      return JSON.parse(textOf(result)) as Record<string, string>;
    } finally {
      await client.close();
    }
  }

  test("N8: a modern tools/call carries MCP-Protocol-Version, Mcp-Method and Mcp-Name, and no session", async () => {
    const headers = await whoami(fleetOf().http("modern-2026-07-28").url);
    assert.equal(headers["mcp-protocol-version"], "2026-07-28");
    assert.equal(headers["mcp-method"], "tools/call");
    // whoami is itself the tools/call being observed, so its own name is the one we see.
    assert.equal(headers["mcp-name"], "whoami");
    assert.equal(headers["mcp-session-id"], undefined, "a modern request carries no session id");
  });

  for (const name of ["streamable-2025-11-25-json", "streamable-2025-11-25-sse"] as const) {
    test(`N8: a legacy 2025-11-25 tools/call carries the version and session headers and no modern ones (${name})`, async () => {
      const headers = await whoami(fleetOf().http(name).url);
      assert.equal(headers["mcp-protocol-version"], "2025-11-25");
      assert.equal(typeof headers["mcp-session-id"], "string");
      assert.ok((headers["mcp-session-id"] ?? "").length > 0, "a non-empty session id");
      assert.equal(headers["mcp-method"], undefined, "no Mcp-Method on a legacy request");
      assert.equal(headers["mcp-name"], undefined, "no Mcp-Name on a legacy request");
    });
  }

  test("N8: a legacy 2025-06-18 tools/call carries MCP-Protocol-Version 2025-06-18 and no modern headers", async () => {
    const headers = await whoami(fleetOf().http("streamable-2025-06-18").url);
    assert.equal(headers["mcp-protocol-version"], "2025-06-18");
    assert.equal(typeof headers["mcp-session-id"], "string");
    assert.equal(headers["mcp-method"], undefined);
    assert.equal(headers["mcp-name"], undefined);
  });

  test("N8: a legacy HTTP+SSE (2024-11-05) POST carries no modern headers", async () => {
    const headers = await whoami(fleetOf().http("legacy-sse-2024-11-05").url);
    assert.equal(headers["mcp-method"], undefined);
    assert.equal(headers["mcp-name"], undefined);
  });
});
