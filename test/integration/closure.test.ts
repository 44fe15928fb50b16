// Closure: a server that dies, a connection cut mid-reply, and close() itself. Every pending
// request settles promptly with one typed closure error, and nothing is left keeping the process
// alive afterwards.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { LIBRARY_URL, runChildToExit } from "../helpers/child-exit.ts";
import { until } from "../helpers/fake-clock.ts";
import { type HttpServerName, type StdioServerName, useFleet } from "../helpers/fleet.ts";

const CONNECT_TIMEOUT_MS = 10_000;
/** Generous on purpose: closure must settle a call long before its own timeout would. */
const CALL_TIMEOUT_MS = 15_000;
/** What "promptly" means on a slow, noisy two-core machine; still far below CALL_TIMEOUT_MS. */
const PROMPT_MS = 5_000;
/**
 * CONTRACT C9: a script that connects, calls and closes exits by itself within this. The whole
 * script is timed (its TypeScript loader, the server's start), so the bound is loose: what is
 * checked is that it exits by itself at all, where a leaked handle would keep it alive forever.
 */
const EXIT_WITHIN_MS = 30_000;

const DIES_MID_CALL = fileURLToPath(new URL("../fixtures/dies-mid-call-server.mjs", import.meta.url));
const CONNECT_CALL_CLOSE = fileURLToPath(new URL("../fixtures/connect-call-close.ts", import.meta.url));

const fleetOf = useFleet([
  "legacy-sse-2024-11-05",
  "streamable-2025-11-25-sse",
  "streamable-2025-11-25-json",
  "modern-2026-07-28",
  "legacy-stdio",
  "modern-stdio",
]);

/** A typed closure error: a TetherError whose code is `connection`. */
function assertClosure(error: unknown): asserts error is TetherError {
  assert.ok(TetherError.is(error), `expected a TetherError, got ${String(error)}`);
  assert.equal(error.code, "connection", `code (reason ${error.reason}, closure ${error.closure})`);
}

/** Resolves how long `promise` took to reject, and what with; fails if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  assert.fail("expected the operation to reject, but it resolved");
}

// ---- a hand-written legacy Streamable HTTP server on loopback ----

type ToolsCallHandler = (req: IncomingMessage, res: ServerResponse, id: unknown) => void;

interface LoopbackServer {
  url: string;
  /** DELETE requests received, each with the session id it named. */
  deletes: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * Legacy (2025-11-25) Streamable HTTP at /mcp: `server/discover` gets 400 text/plain (legacy
 * evidence), `initialize` a JSON reply with a session id, notifications 202, `tools/list` one tool,
 * GET 405, DELETE 200; `tools/call` is handed to `onToolsCall`, which misbehaves.
 */
async function startLoopbackServer(onToolsCall: ToolsCallHandler): Promise<LoopbackServer> {
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };
  const deletes: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === "GET") return void res.writeHead(405, { allow: "POST, DELETE" }).end();
    if (req.method === "DELETE") {
      const session = req.headers["mcp-session-id"];
      deletes.push(Array.isArray(session) ? session.join(",") : session);
      return void res.writeHead(200).end();
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        id?: unknown;
        method?: string;
        params?: { protocolVersion?: string };
      };
      if (message.id === undefined) return void res.writeHead(202).end();
      switch (message.method) {
        case "server/discover":
          res.writeHead(400, { "content-type": "text/plain" }).end("Bad Request");
          return;
        case "initialize":
          json(
            res,
            {
              jsonrpc: "2.0",
              id: message.id,
              result: {
                protocolVersion: message.params?.protocolVersion ?? "2025-11-25",
                capabilities: { tools: {} },
                serverInfo: { name: "loopback", version: "0.0.1" },
              },
            },
            { "mcp-session-id": "loopback-session" },
          );
          return;
        case "tools/list":
          json(res, {
            jsonrpc: "2.0",
            id: message.id,
            result: { tools: [{ name: "doomed", inputSchema: { type: "object" } }] },
          });
          return;
        case "tools/call":
          onToolsCall(req, res, message.id);
          return;
        default:
          json(res, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    deletes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Legacy HTTP+SSE (2024-11-05): GET /sse opens the stream and names /messages as its endpoint;
 * POSTs get 202 and their replies travel on the stream. On `tools/call`, `onToolsCall` gets the
 * stream's response object and misbehaves with it.
 */
async function startLoopbackSseServer(
  onToolsCall: (stream: ServerResponse) => void,
): Promise<LoopbackServer> {
  let stream: ServerResponse | undefined;
  const push = (message: unknown) => stream?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (req.method === "GET" && path === "/sse") {
      stream = res;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write("event: endpoint\ndata: /messages?session=loopback\n\n");
      return;
    }
    if (req.method !== "POST" || path !== "/messages") return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown; method?: string };
      res.writeHead(202).end();
      if (message.id === undefined) return;
      if (message.method === "initialize") {
        push({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: "2024-11-05",
            capabilities: { tools: {} },
            serverInfo: { name: "loopback-sse", version: "0.0.1" },
          },
        });
      } else if (message.method === "tools/call" && stream) {
        onToolsCall(stream);
      } else {
        push({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    deletes: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `data`, then destroys the connection once it has had time to reach the client. */
function writeThenDestroy(res: ServerResponse, data: string): void {
  res.write(data, () => setTimeout(() => res.socket?.destroy(), 50));
}

// ---- C2 ----

/** A client of the stdio server that dies in the middle of a tools/call (test/fixtures/dies-mid-call-server.mjs). */
function connectToDying(settings: Partial<ConnectOptions> = {}) {
  return connect({
    command: process.execPath,
    args: [DIES_MID_CALL],
    timeoutMs: CONNECT_TIMEOUT_MS,
    ...settings,
  } as ConnectOptions);
}

/** A fleet server of each transport: this stdio one, this Streamable HTTP one, HTTP+SSE, modern HTTP. */
function oneOfEachTransport(
  stdio: StdioServerName,
  streamable: HttpServerName,
): { label: string; target: () => ConnectOptions }[] {
  return [
    {
      label: "stdio",
      target: () => {
        const s = fleetOf().stdioServer(stdio);
        return { command: s.command, args: s.args };
      },
    },
    { label: "Streamable HTTP", target: () => ({ url: fleetOf().http(streamable).url }) },
    { label: "HTTP+SSE", target: () => ({ url: fleetOf().http("legacy-sse-2024-11-05").url }) },
    { label: "modern HTTP", target: () => ({ url: fleetOf().http("modern-2026-07-28").url }) },
  ];
}

describe("C2: closure settles every pending request", () => {
  test("C2: a stdio server that exits mid-call rejects the pending call with a connection error, promptly", async () => {
    const client = await connectToDying({ call: { timeoutMs: CALL_TIMEOUT_MS } });
    try {
      assert.equal(client.era, "legacy");
      const tools = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ["doomed"],
      );
      const { error, ms } = await rejection(client.callTool("doomed", {}));
      assertClosure(error);
      assert.ok(
        error.closure === "process_exit" || error.closure === "eof",
        `closure category ${error.closure}`,
      );
      assert.ok(ms < PROMPT_MS, `the call settled after ${Math.round(ms)} ms, not promptly`);
      await until(() => client.state === "closed", PROMPT_MS, "the session to end closed");
      // A closed session refuses new work at once, with the same kind of error.
      const later = await rejection(client.callTool("doomed", {}));
      assertClosure(later.error);
      assert.ok(later.ms < PROMPT_MS);
    } finally {
      await client.close();
    }
  });

  test("C2: every request pending when a stdio server exits settles with the same closure", async () => {
    const client = await connectToDying({ call: { timeoutMs: CALL_TIMEOUT_MS } });
    try {
      const outcomes = await Promise.all([
        rejection(client.callTool("doomed", {})),
        rejection(client.callTool("doomed", {})),
        rejection(client.callTool("doomed", {})),
      ]);
      for (const { error, ms } of outcomes) {
        assertClosure(error);
        assert.ok(ms < PROMPT_MS, `settled after ${Math.round(ms)} ms`);
      }
      const closures = outcomes.map(({ error }) => (error as TetherError).closure);
      assert.equal(new Set(closures).size, 1, `one closure cause for all: ${closures.join(", ")}`);
    } finally {
      await client.close();
    }
  });

  describe("C2: a loopback Streamable HTTP server that drops the connection during tools/call", () => {
    const variants: { label: string; onToolsCall: ToolsCallHandler }[] = [
      {
        label: "before any response headers",
        onToolsCall: (req) => req.socket.destroy(),
      },
      {
        label: "midway through a JSON body",
        onToolsCall: (_req, res, id) => {
          const body = JSON.stringify({ jsonrpc: "2.0", id, result: { content: [] } });
          res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
          writeThenDestroy(res, body.slice(0, 10));
        },
      },
      {
        label: "midway through an SSE event",
        onToolsCall: (_req, res, id) => {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          writeThenDestroy(res, `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"res`);
        },
      },
      {
        label: "after an SSE stream that ends without the response",
        onToolsCall: (_req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          res.end(": nothing to see\n\n");
        },
      },
    ];
    for (const { label, onToolsCall } of variants) {
      test(`C2: the pending call rejects with a connection error, promptly (${label})`, async () => {
        const server = await startLoopbackServer(onToolsCall);
        let client: Client | undefined;
        try {
          client = await connect({
            url: server.url,
            timeoutMs: CONNECT_TIMEOUT_MS,
            call: { timeoutMs: CALL_TIMEOUT_MS },
          });
          assert.equal(client.protocolVersion, "2025-11-25");
          assert.equal(client.transportMode, "streamable-http");
          const { error, ms } = await rejection(client.callTool("doomed", {}));
          assertClosure(error);
          assert.ok(ms < PROMPT_MS, `the call settled after ${Math.round(ms)} ms, not promptly`);
        } finally {
          await client?.close();
          await server.close();
        }
      });
    }
  });

  describe("C2: a loopback HTTP+SSE server whose event stream goes away during tools/call", () => {
    const variants: { label: string; onToolsCall: (stream: ServerResponse) => void }[] = [
      { label: "the stream ends cleanly", onToolsCall: (stream) => stream.end() },
      { label: "the stream's connection is destroyed", onToolsCall: (stream) => stream.socket?.destroy() },
      {
        label: "the connection is destroyed midway through an event",
        onToolsCall: (stream) => writeThenDestroy(stream, 'event: message\ndata: {"jsonrpc":"2.0","id":'),
      },
    ];
    for (const { label, onToolsCall } of variants) {
      test(`C2: the pending call rejects with a connection error and the session closes (${label})`, async () => {
        const server = await startLoopbackSseServer(onToolsCall);
        let client: Client | undefined;
        try {
          client = await connect({
            url: server.url,
            transport: "sse",
            timeoutMs: CONNECT_TIMEOUT_MS,
            call: { timeoutMs: CALL_TIMEOUT_MS },
          });
          assert.equal(client.transportMode, "sse");
          const { error, ms } = await rejection(client.callTool("doomed", {}));
          assertClosure(error);
          assert.ok(ms < PROMPT_MS, `the call settled after ${Math.round(ms)} ms, not promptly`);
          const cl = client;
          await until(() => cl.state === "closed", PROMPT_MS, "the session to end closed");
        } finally {
          await client?.close();
          await server.close();
        }
      });
    }
  });

  const pendingCases = oneOfEachTransport("legacy-stdio", "streamable-2025-11-25-sse");
  for (const { label, target } of pendingCases) {
    test(`C2: close() settles a pending call with a connection error, promptly (${label})`, async () => {
      const client = await connect({ ...target(), timeoutMs: CONNECT_TIMEOUT_MS });
      const pending = rejection(client.callTool("slow", { ms: 30_000 }, { timeoutMs: CALL_TIMEOUT_MS }));
      // A later call, answered: the slow call went out before it, so the close really races a
      // call in flight (one the server holds).
      await client.callTool("echo", { message: "after the slow one" }, { timeoutMs: CALL_TIMEOUT_MS });
      const closed = client.close();
      const { error, ms } = await pending;
      assertClosure(error);
      assert.equal(error.closure, "closed_by_client");
      assert.ok(ms < PROMPT_MS, `the call settled after ${Math.round(ms)} ms`);
      await closed;
      assert.equal(client.state, "closed");
    });
  }
});

// ---- C5 ----

describe("C5: close() is idempotent, shared, and never rejects", () => {
  const cases = oneOfEachTransport("modern-stdio", "streamable-2025-11-25-json");
  for (const { label, target } of cases) {
    test(`C5: close() twice returns the same promise, which resolves (${label})`, async () => {
      const client = await connect({ ...target(), timeoutMs: CONNECT_TIMEOUT_MS });
      const first = client.close();
      const second = client.close();
      assert.equal(second, first, "every close() call gets the same promise");
      assert.equal(await first, undefined);
      assert.equal(client.close(), first, "still the same promise after it settled");
      assert.equal(client.state, "closed");
    });
  }

  test("C5: the legacy session we opened is ended with exactly one DELETE, however often close() is called", async () => {
    const server = await startLoopbackServer((_req, res, id) => {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "ok" }] } }));
    });
    try {
      const client = await connect({ url: server.url, timeoutMs: CONNECT_TIMEOUT_MS });
      await client.callTool("doomed", {}, { timeoutMs: CALL_TIMEOUT_MS });
      await Promise.all([client.close(), client.close(), client.close()]);
      await client.close();
      assert.deepEqual(server.deletes, ["loopback-session"]);
    } finally {
      await server.close();
    }
  });

  test("C5: close() after the server died resolves, and is still shared", async () => {
    const client = await connectToDying();
    await rejection(client.callTool("doomed", {}, { timeoutMs: CALL_TIMEOUT_MS }));
    const first = client.close();
    assert.equal(client.close(), first);
    await first;
    assert.equal(client.state, "closed");
  });
});

// ---- C9 ----

// Each test runs its own child process, so they run side by side.
describe("C9: after close() nothing of ours keeps the process alive", { concurrency: 4 }, () => {
  const cases: {
    label: string;
    env: () => Record<string, string>;
    expected: { era: string; transportMode: string };
  }[] = [
    {
      label: "legacy stdio",
      env: () => stdioEnv("legacy-stdio"),
      expected: { era: "legacy", transportMode: "stdio" },
    },
    {
      label: "modern stdio",
      env: () => stdioEnv("modern-stdio"),
      expected: { era: "modern", transportMode: "stdio" },
    },
    {
      label: "legacy Streamable HTTP (SSE replies, standalone GET stream)",
      env: () => httpEnv("streamable-2025-11-25-sse"),
      expected: { era: "legacy", transportMode: "streamable-http" },
    },
    {
      label: "legacy HTTP+SSE",
      env: () => httpEnv("legacy-sse-2024-11-05", "sse"),
      expected: { era: "legacy", transportMode: "sse" },
    },
    {
      label: "modern Streamable HTTP",
      env: () => httpEnv("modern-2026-07-28"),
      expected: { era: "modern", transportMode: "streamable-http" },
    },
  ];

  function stdioEnv(name: StdioServerName): Record<string, string> {
    const s = fleetOf().stdioServer(name);
    return { TETHER_COMMAND: s.command, TETHER_ARGS: JSON.stringify(s.args) };
  }
  function httpEnv(name: HttpServerName, transport = "auto"): Record<string, string> {
    return { TETHER_URL: fleetOf().http(name).url, TETHER_TRANSPORT: transport };
  }

  for (const { label, env, expected } of cases) {
    test(`C9: a script that connects, lists, calls and closes exits by itself (${label})`, async () => {
      const run = await runChildToExit({
        file: CONNECT_CALL_CLOSE,
        env: env(),
        exitWithinMs: EXIT_WITHIN_MS,
      });
      assert.equal(run.code, 0, `exit code ${run.code}; stderr:\n${run.stderr}`);
      const line = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
      assert.equal(line.era, expected.era);
      assert.equal(line.transportMode, expected.transportMode);
      assert.equal(line.echo, "still here?");
      assert.equal(line.state, "closed");
    });
  }

  test("C9: a script whose stdio server died mid-call exits by itself after close()", async () => {
    const run = await runChildToExit({
      exitWithinMs: EXIT_WITHIN_MS,
      source: `
        import { connect } from ${JSON.stringify(LIBRARY_URL)};
        const client = await connect({ command: process.execPath, args: [${JSON.stringify(DIES_MID_CALL)}], timeoutMs: 8000 });
        const code = await client.callTool("doomed", {}).then(() => "resolved", (e) => e.code);
        await client.close();
        process.stdout.write(code + "\\n");
      `,
    });
    assert.equal(run.code, 0, `exit code ${run.code}; stderr:\n${run.stderr}`);
    assert.equal(run.stdout.trim(), "connection");
  });

  test("C9: a script whose connect() failed (nothing listening) exits by itself", async () => {
    // A port that was free a moment ago: bind, note it, release it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const run = await runChildToExit({
      exitWithinMs: EXIT_WITHIN_MS,
      source: `
        import { connect } from ${JSON.stringify(LIBRARY_URL)};
        const code = await connect({ url: "http://127.0.0.1:${port}/mcp", timeoutMs: 5000 }).then(
          async (c) => { await c.close(); return "connected"; },
          (e) => e.code,
        );
        process.stdout.write(code + "\\n");
      `,
    });
    assert.equal(run.code, 0, `exit code ${run.code}; stderr:\n${run.stderr}`);
    assert.equal(run.stdout.trim(), "connection");
  });
});
