// Era and version negotiation against scripted servers, one test per row of the dual-era
// classifier (PROTOCOL.md, "Finding the era"; CONTRACT N1-N8). Each test checks the outcome (era
// or typed error), that a reply which decided it was acted on at once (no timer waited out), and
// what crossed the wire.
//
// Every connection runs on a fake clock (`deps.clock`) that only the test moves: a reply that
// decides the outcome decides it with the clock never moved, and where silence is the evidence
// the test moves the clock to the probe limit once the probe reached the server, so no test
// depends on how fast the machine is.

import assert from "node:assert/strict";
import { describe, type TestContext, test } from "node:test";
import {
  type Client,
  type ConnectOptions,
  connect,
  type LifecycleEvent,
  TetherError,
} from "../../src/index.ts";
import { type FakeClock, fakeClock, until } from "../helpers/fake-clock.ts";
import {
  discoverResult,
  empty,
  type Handler,
  HOSTILE_SESSION_ID,
  type HostileServer,
  json,
  legacySseHandler,
  legacyStdioServer,
  legacyStreamableHandler,
  modernStreamableHandler,
  type Recorded,
  rpcError,
  rpcResult,
  type StdioScript,
  sse,
  startHttp,
  startStdioScript,
  text,
} from "../helpers/hostile.ts";

/** Limits configured on every connection, on the fake clock: none is reached unless a test moves it. */
const PROBE_TIMEOUT_MS = 3_000;
const HANDSHAKE_TIMEOUT_MS = 3_000;
const TIMEOUT_MS = 8_000;
/** For the rows where silence is the evidence: the probe limit the test moves the clock to. */
const SILENT_PROBE_MS = 300;
/**
 * Real time after which a connection that has not settled is cancelled as hung: with the clock
 * never moved, it was waiting for a limit. A bound on a broken test, never reached otherwise.
 */
const STUCK_MS = 20_000;

const MODERN = "2026-07-28";
const META_PREFIX = "io.modelcontextprotocol/";
const MODERN_META_KEYS = [
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientCapabilities",
  "io.modelcontextprotocol/clientInfo",
];

interface Outcome {
  client?: Client;
  error?: unknown;
  events: LifecycleEvent[];
  /** The connection's clock: how much (fake) time passed, and which limits fired. */
  clock: FakeClock;
}

/**
 * Connects with the limits above, cold (no remembered era), recording lifecycle events, on a
 * fake clock that stays where it is unless `drive` moves it.
 */
async function establish(
  options: ConnectOptions,
  drive?: (clock: FakeClock) => Promise<void>,
): Promise<Outcome> {
  const events: LifecycleEvent[] = [];
  const clock = fakeClock();
  const stuck = new AbortController();
  const guard = setTimeout(() => {
    const pending = clock.pending().map((t) => `${t.ms} ms`);
    stuck.abort(new Error(`hung: still waiting after ${STUCK_MS} ms, on limits ${pending.join(", ")}`));
  }, STUCK_MS);
  const connecting = connect({
    timeoutMs: TIMEOUT_MS,
    probeTimeoutMs: PROBE_TIMEOUT_MS,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
    listen: false,
    eraHints: false,
    signal: stuck.signal,
    ...options,
    deps: { clock },
    onEvent: (e) => events.push(e),
  });
  try {
    const [client] = await Promise.all([connecting, drive?.(clock)]);
    return { client, events, clock };
  } catch (error) {
    return {
      error: await connecting.then(
        () => error,
        (e: unknown) => e,
      ),
      events,
      clock,
    };
  } finally {
    clearTimeout(guard);
  }
}

/** Asserts the connection succeeded with this era and version, then closes it. */
async function expectEstablished(
  o: Outcome,
  expected: { era: "legacy" | "modern"; protocolVersion: string; transportMode?: string },
): Promise<Client> {
  if (!o.client)
    throw new assert.AssertionError({ message: `expected a client, got ${describeError(o.error)}` });
  assert.equal(o.client.era, expected.era);
  assert.equal(o.client.protocolVersion, expected.protocolVersion);
  if (expected.transportMode) assert.equal(o.client.transportMode, expected.transportMode);
  return o.client;
}

function describeError(error: unknown): string {
  if (error instanceof TetherError) {
    const cause = error.code === "cancelled" ? ` (${String(error.cause)})` : "";
    return `TetherError ${error.code}/${error.reason} at ${error.stage}${cause}`;
  }
  return String(error);
}

/** Asserts the connection failed with this code (and reason), and returns the error. */
function expectFailure(o: Outcome, code: string, reason?: string): TetherError {
  o.client?.close();
  assert.equal(o.client, undefined, `expected ${code}, but it connected`);
  assert.ok(o.error instanceof TetherError, `expected a TetherError, got ${describeError(o.error)}`);
  assert.equal(o.error.code, code, describeError(o.error));
  if (reason !== undefined) assert.equal(o.error.reason, reason, describeError(o.error));
  return o.error;
}

/** A reply decided it: the connection settled with its clock never moved, so no limit was waited out. */
function decidedAtOnce(o: Outcome): void {
  assert.equal(o.clock.now(), 0, "no time passed");
  assert.deepEqual(o.clock.fired(), [], "a reply had decided it, so no limit fired");
}

/** The connection succeeded with this era and version, a reply deciding it (see decidedAtOnce); then closed. */
async function establishedAtOnce(
  o: Outcome,
  expected: Parameters<typeof expectEstablished>[1],
): Promise<void> {
  const client = await expectEstablished(o, expected);
  await client.close();
  decidedAtOnce(o);
}

/** The connection failed with this code (and reason), a reply deciding it; returns the error. */
function failedAtOnce(o: Outcome, code: string, reason?: string): TetherError {
  const error = expectFailure(o, code, reason);
  decidedAtOnce(o);
  return error;
}

/** Moves the clock to the probe limit once the first process of `script` has received the probe. */
function waitOutProbe(script: StdioScript) {
  return async (clock: FakeClock) => {
    await until(
      () => script.pids().length > 0 && script.received(script.pids()[0]!).includes("server/discover"),
      STUCK_MS,
      "the probe reached the server",
    );
    await clock.advanceTo(await clock.timer((t) => t.ms === SILENT_PROBE_MS));
  };
}

function evidenceOf(o: Outcome) {
  return o.events.filter((e) => e.type === "era_evidence");
}

function metaOf(rec: Recorded): Record<string, unknown> {
  const meta = rec.rpcParams?._meta;
  return typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {};
}

function stdioMeta(message: { params?: Record<string, unknown> } | undefined): Record<string, unknown> {
  const meta = message?.params?._meta;
  return typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {};
}

/** Requests that carried JSON-RPC, in order, as "METHOD rpcMethod". */
function wire(requests: Recorded[]): string[] {
  return requests.map((r) => `${r.method} ${r.rpcMethod ?? r.path}`);
}

/** A legacy server that refuses the probe (HTTP 400) and answers `initialize` with `version`. */
function initializeAnswering(t: TestContext, version: string) {
  return legacyHttp(t, json(400, rpcError(null, -32000, "Bad Request")), {
    initialize: json(200, (r) =>
      rpcResult(r.rpcId, {
        protocolVersion: version,
        capabilities: {},
        serverInfo: { name: "x", version: "1" },
      }),
    ),
  });
}

/** An HTTP server for the test `t` only: closed when it ends. */
async function serveFor(
  t: TestContext,
  handler: Handler,
  options?: { path?: string },
): Promise<HostileServer> {
  const server = await startHttp(handler, options);
  t.after(() => server.close());
  return server;
}

/** A legacy Streamable HTTP server for the test `t` whose `server/discover` gets `probe`. */
function legacyHttp(t: TestContext, probe: Handler, overrides: Record<string, Handler> = {}) {
  return serveFor(t, legacyStreamableHandler({ "server/discover": probe, ...overrides }));
}

async function withStdio<T>(script: StdioScript, fn: (s: StdioScript) => Promise<T>): Promise<T> {
  try {
    return await fn(script);
  } finally {
    script.dispose();
  }
}

const LEGACY_TAIL = ["POST initialize", "POST notifications/initialized"];
/** What a legacy server over Streamable HTTP establishes. */
const LEGACY_HTTP = {
  era: "legacy",
  protocolVersion: "2025-11-25",
  transportMode: "streamable-http",
} as const;

/** Legacy after the probe: server/discover, then initialize and its notification, on the same transport. */
function assertLegacyAfterProbe(server: HostileServer): void {
  assert.deepEqual(wire(server.requests).slice(0, 3), ["POST server/discover", ...LEGACY_TAIL]);
}

// ---------------------------------------------------------------- HTTP: the probe's reply

describe("HTTP: server/discover answered", () => {
  test("N5: a discover result listing an overlapping version means modern; initialize is never sent", async (t) => {
    const server = await serveFor(t, modernStreamableHandler());
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "modern", protocolVersion: MODERN });
    assert.deepEqual(wire(server.requests), ["POST server/discover"]);
    assert.deepEqual(
      evidenceOf(o).map((e) => e.era),
      ["modern"],
    );
  });

  test("N4: a discover result with no version in common fails version_mismatch naming both ranges", async (t) => {
    const server = await serveFor(
      t,
      modernStreamableHandler({
        "server/discover": json(200, (r) => rpcResult(r.rpcId, discoverResult(["2099-01-01"]))),
      }),
    );
    const o = await establish({ url: server.url });
    const error = failedAtOnce(o, "protocol", "version_mismatch");
    assert.match(error.message, /2099-01-01/, "names what the server offered");
    assert.match(error.message, /2026-07-28/, "names what the client accepts");
    assert.deepEqual(wire(server.requests), ["POST server/discover"], "no initialize, no retry");
  });

  test("N5: -32022 with data.supported is retried once at a supported version, then modern", async (t) => {
    let discovers = 0;
    const server = await serveFor(
      t,
      modernStreamableHandler({
        "server/discover": (res, rec, req) => {
          discovers++;
          if (discovers === 1)
            return json(
              400,
              rpcError(rec.rpcId, -32022, "Unsupported protocol version", {
                supported: ["2099-01-01", MODERN],
                requested: "1999-01-01",
              }),
            )(res, rec, req);
          return json(200, rpcResult(rec.rpcId, discoverResult([MODERN])))(res, rec, req);
        },
      }),
    );
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "modern", protocolVersion: MODERN });
    assert.deepEqual(wire(server.requests), ["POST server/discover", "POST server/discover"]);
    const retry = server.requests[1]!;
    assert.equal(retry.headers["mcp-protocol-version"], MODERN);
    assert.equal(metaOf(retry)["io.modelcontextprotocol/protocolVersion"], MODERN);
  });

  test("N5: -32022 on every discover is retried once only, then fails (protocol)", async (t) => {
    const server = await serveFor(
      t,
      modernStreamableHandler({
        "server/discover": json(400, (r) =>
          rpcError(r.rpcId, -32022, "Unsupported protocol version", {
            supported: [MODERN],
            requested: MODERN,
          }),
        ),
      }),
    );
    const o = await establish({ url: server.url });
    failedAtOnce(o, "protocol");
    assert.deepEqual(wire(server.requests), ["POST server/discover", "POST server/discover"]);
  });

  test("N4: -32022 listing only legacy versions leads to initialize in auto mode", async (t) => {
    const server = await legacyHttp(
      t,
      json(400, (r) =>
        rpcError(r.rpcId, -32022, "Unsupported protocol version", {
          supported: ["2025-06-18", "2025-11-25"],
          requested: MODERN,
        }),
      ),
    );
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "legacy", protocolVersion: "2025-11-25" });
    assertLegacyAfterProbe(server);
  });

  test("N3: under a modern pin, -32022 listing only lower versions fails version_mismatch; no fallback below the pin", async (t) => {
    const server = await legacyHttp(
      t,
      json(400, (r) =>
        rpcError(r.rpcId, -32022, "Unsupported protocol version", {
          supported: ["2025-11-25"],
          requested: MODERN,
        }),
      ),
    );
    const o = await establish({ url: server.url, protocolVersion: MODERN });
    const error = failedAtOnce(o, "protocol", "version_mismatch");
    assert.match(error.message, /2025-11-25/, "names what the server offered");
    assert.deepEqual(wire(server.requests), ["POST server/discover"], "no initialize below the pin");
  });

  test("N3: under a modern pin, a legacy server fails version_mismatch; initialize is never sent", async (t) => {
    const server = await legacyHttp(
      t,
      json(400, rpcError(null, -32000, "Bad Request: No valid session ID provided")),
    );
    const o = await establish({ url: server.url, protocolVersion: MODERN });
    failedAtOnce(o, "protocol", "version_mismatch");
    assert.deepEqual(wire(server.requests), ["POST server/discover"]);
  });

  for (const code of [-32601, -32602, -32000]) {
    test(`N5: HTTP 200 carrying JSON-RPC ${code} means legacy: initialize follows on the same transport`, async (t) => {
      const server = await legacyHttp(
        t,
        json(200, (r) => rpcError(r.rpcId, code, "Refused")),
      );
      const o = await establish({ url: server.url });
      await establishedAtOnce(o, LEGACY_HTTP);
      assertLegacyAfterProbe(server);
      assert.deepEqual(
        evidenceOf(o).map((e) => [e.era, e.rpcCode]),
        [["legacy", code]],
      );
    });
  }

  test("N5: an SSE reply (HTTP 200) whose event carries JSON-RPC -32601 means legacy", async (t) => {
    const server = await legacyHttp(
      t,
      sse((r) => [{ event: "message", id: "1", data: rpcError(r.rpcId, -32601, "Method not found") }]),
    );
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "legacy", protocolVersion: "2025-11-25" });
    assertLegacyAfterProbe(server);
  });

  test("N5: HTTP 200 carrying a JSON-RPC error with id null (the server could not read the id) means legacy", async (t) => {
    const server = await legacyHttp(t, json(200, rpcError(null, -32600, "Invalid Request")));
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "legacy", protocolVersion: "2025-11-25" });
    assertLegacyAfterProbe(server);
  });

  const legacyBodies: { label: string; status: number; probe: Handler }[] = [
    { label: "400 with an empty body", status: 400, probe: empty(400) },
    { label: "400 text/plain", status: 400, probe: text(400, "Bad Request") },
    {
      label: "400 JSON that is not JSON-RPC",
      status: 400,
      probe: json(400, { error: "bad request", ok: false }),
    },
    {
      label: "404 with an 'invalid session' JSON-RPC body",
      status: 404,
      probe: json(404, rpcError(null, -32001, "Session not found")),
    },
    {
      label: "405 with a JSON-RPC body sent as text/plain",
      status: 405,
      probe: json(405, rpcError(null, -32000, "Method not allowed."), { contentType: "text/plain" }),
    },
  ];
  for (const row of legacyBodies) {
    test(`N5: ${row.label} means legacy: initialize follows`, async (t) => {
      const server = await legacyHttp(t, row.probe);
      const o = await establish({ url: server.url });
      await establishedAtOnce(o, LEGACY_HTTP);
      assertLegacyAfterProbe(server);
      assert.deepEqual(
        evidenceOf(o).map((e) => [e.era, e.httpStatus]),
        [["legacy", row.status]],
      );
    });
  }

  const neverEvidence: { status: number; code: string }[] = [
    { status: 401, code: "unauthorized" },
    { status: 403, code: "forbidden" },
    { status: 429, code: "throttled" },
    { status: 500, code: "upstream" },
    { status: 502, code: "upstream" },
    { status: 503, code: "upstream" },
  ];
  for (const row of neverEvidence) {
    test(`N5: HTTP ${row.status} is never era evidence: ${row.code}, no initialize, no SSE GET`, async (t) => {
      // The body looks legacy on purpose: the status alone decides.
      const server = await legacyHttp(t, json(row.status, rpcError(null, -32601, "Method not found")));
      const o = await establish({ url: server.url });
      const error = failedAtOnce(o, row.code);
      assert.equal(error.httpStatus, row.status);
      assert.deepEqual(wire(server.requests), ["POST server/discover"], "no initialize, no GET, no fallback");
      assert.deepEqual(evidenceOf(o), [], "no era evidence was drawn");
    });
  }
});

// ---------------------------------------------------------------- HTTP+SSE (2024-11-05)

describe("HTTP: a legacy-only HTTP+SSE server in auto mode", () => {
  test("N5: connects via SSE after exactly two refused POSTs (discover, initialize), without waiting on a timer", async (t) => {
    const server = await serveFor(t, legacySseHandler({ post: text(405, "Method Not Allowed") }), {
      path: "/sse",
    });
    const o = await establish({ url: server.url });
    const client = await expectEstablished(o, {
      era: "legacy",
      protocolVersion: "2024-11-05",
      transportMode: "sse",
    });
    const tools = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ["echo"],
    );
    await client.close();
    decidedAtOnce(o);
    assert.deepEqual(wire(server.requests).slice(0, 5), [
      "POST server/discover",
      "POST initialize",
      "GET /sse",
      "POST initialize",
      "POST notifications/initialized",
    ]);
    assert.equal(server.requests[3]!.path, "/messages?s=1");
  });

  const refusals: { label: string; post: Handler }[] = [
    { label: "404 text/plain", post: text(404, "Not Found") },
    { label: "400 with an empty body", post: empty(400) },
    { label: "405 with a JSON-RPC body", post: json(405, rpcError(null, -32000, "Method not allowed.")) },
  ];
  for (const row of refusals) {
    test(`N5: POSTs refused with ${row.label} lead to the SSE transport after two requests`, async (t) => {
      const server = await serveFor(t, legacySseHandler({ post: row.post }), { path: "/sse" });
      const o = await establish({ url: server.url });
      await establishedAtOnce(o, {
        era: "legacy",
        protocolVersion: "2024-11-05",
        transportMode: "sse",
      });
      assert.deepEqual(wire(server.requests).slice(0, 3), [
        "POST server/discover",
        "POST initialize",
        "GET /sse",
      ]);
    });
  }
});

// ---------------------------------------------------------------- stdio

describe("stdio: the probe's fate", () => {
  test("N6: a silent probe means legacy, and initialize runs on a fresh process, never on the probed one", async () => {
    await withStdio(
      startStdioScript(legacyStdioServer({ discover: { reply: "silent" } })),
      async (script) => {
        const o = await establish(
          { command: script.command, args: script.args, probeTimeoutMs: SILENT_PROBE_MS },
          waitOutProbe(script),
        );
        const client = await expectEstablished(o, {
          era: "legacy",
          protocolVersion: "2025-11-25",
          transportMode: "stdio",
        });
        await client.close();
        assert.equal(
          o.clock.now(),
          SILENT_PROBE_MS,
          "the probe limit was waited out: silence is the evidence",
        );
        assert.deepEqual(
          o.clock.fired().map((t) => t.ms),
          [SILENT_PROBE_MS],
          "the probe limit, and no other, fired",
        );
        const pids = script.pids();
        assert.equal(pids.length, 2, "one probed process, one fresh process");
        assert.deepEqual(
          script.received(pids[0]!),
          ["server/discover"],
          "initialize never reached the probed process",
        );
        assert.deepEqual(script.received(pids[1]!).slice(0, 2), ["initialize", "notifications/initialized"]);
        assert.equal(script.received(pids[1]!).includes("server/discover"), false);
      },
    );
  });

  test("N6: a server that exits on any request before initialize means legacy on a fresh process, at once", async () => {
    await withStdio(startStdioScript(legacyStdioServer({ discover: { reply: "exit" } })), async (script) => {
      const o = await establish({ command: script.command, args: script.args });
      await establishedAtOnce(o, {
        era: "legacy",
        protocolVersion: "2025-11-25",
        transportMode: "stdio",
      });
      const pids = script.pids();
      assert.equal(pids.length, 2);
      assert.deepEqual(script.received(pids[0]!), ["server/discover"]);
      assert.deepEqual(script.received(pids[1]!).slice(0, 2), ["initialize", "notifications/initialized"]);
    });
  });

  test("N6: a server that exits on every request gets one fresh process only, then a connection failure", async () => {
    await withStdio(startStdioScript(`onMessage(() => process.exit(0));`), async (script) => {
      const o = await establish({ command: script.command, args: script.args });
      failedAtOnce(o, "connection");
      const pids = script.pids();
      assert.equal(pids.length, 2, "the probed process, then one fresh process");
      assert.deepEqual(script.received(pids[0]!), ["server/discover"]);
      assert.deepEqual(script.received(pids[1]!), ["initialize"]);
    });
  });

  test("N3: under a modern pin a silent stdio probe is a probe_timeout; no fresh process, no initialize", async () => {
    await withStdio(
      startStdioScript(legacyStdioServer({ discover: { reply: "silent" } })),
      async (script) => {
        const o = await establish(
          {
            command: script.command,
            args: script.args,
            protocolVersion: MODERN,
            probeTimeoutMs: SILENT_PROBE_MS,
          },
          waitOutProbe(script),
        );
        expectFailure(o, "timeout", "probe_timeout");
        assert.equal(o.clock.now(), SILENT_PROBE_MS, "it failed when the probe limit fired");
        const pids = script.pids();
        assert.equal(pids.length, 1);
        assert.deepEqual(script.received(pids[0]!), ["server/discover"]);
      },
    );
  });

  for (const code of [-32601, -32602, -32000]) {
    test(`N5: a JSON-RPC ${code} reply to the probe means legacy, on the same process`, async () => {
      await withStdio(
        startStdioScript(legacyStdioServer({ discover: { reply: "error", code } })),
        async (script) => {
          const o = await establish({ command: script.command, args: script.args });
          await establishedAtOnce(o, { era: "legacy", protocolVersion: "2025-11-25" });
          const pids = script.pids();
          assert.equal(pids.length, 1, "an answered probe leaves the process usable");
          assert.deepEqual(script.received(pids[0]!).slice(0, 3), [
            "server/discover",
            "initialize",
            "notifications/initialized",
          ]);
        },
      );
    });
  }

  test("N5: a discover result on stdio means modern; no initialize", async () => {
    await withStdio(
      startStdioScript(legacyStdioServer({ discover: { reply: "result", supportedVersions: [MODERN] } })),
      async (script) => {
        const o = await establish({ command: script.command, args: script.args });
        await establishedAtOnce(o, {
          era: "modern",
          protocolVersion: MODERN,
          transportMode: "stdio",
        });
        assert.equal(script.pids().length, 1);
        assert.deepEqual(script.received(script.pids()[0]!), ["server/discover"]);
      },
    );
  });

  test("N5: initialize answered -32022 with data.supported means modern after all (stdio)", async () => {
    await withStdio(
      startStdioScript(
        legacyStdioServer({
          discover: { reply: "error", code: -32601 },
          initialize: { reply: "unsupported", supported: [MODERN] },
        }),
      ),
      async (script) => {
        const o = await establish({ command: script.command, args: script.args });
        await establishedAtOnce(o, { era: "modern", protocolVersion: MODERN });
        const pids = script.pids();
        assert.equal(pids.length, 1);
        assert.deepEqual(script.received(pids[0]!), ["server/discover", "initialize", "server/discover"]);
        const last = script
          .log()
          .filter((e) => e.event === "recv")
          .at(-1);
        assert.equal(stdioMeta(last?.message)["io.modelcontextprotocol/protocolVersion"], MODERN);
        assert.ok(
          !script.received(pids[0]!).includes("notifications/initialized"),
          "no legacy handshake completed",
        );
      },
    );
  });
});

// ---------------------------------------------------------------- initialize's answer

describe("initialize answered", () => {
  test("N5: initialize answered -32022 with data.supported (HTTP 400) means modern after all", async (t) => {
    let discovers = 0;
    const server = await legacyHttp(
      t,
      (res, rec, req) => {
        discovers++;
        if (discovers === 1) return json(200, rpcError(rec.rpcId, -32601, "Method not found"))(res, rec, req);
        return json(200, rpcResult(rec.rpcId, discoverResult([MODERN])))(res, rec, req);
      },
      {
        initialize: json(400, (r) =>
          rpcError(r.rpcId, -32022, "Unsupported protocol version", {
            supported: [MODERN],
            requested: "2025-11-25",
          }),
        ),
      },
    );
    const o = await establish({ url: server.url });
    await establishedAtOnce(o, { era: "modern", protocolVersion: MODERN });
    assert.deepEqual(wire(server.requests).slice(0, 3), [
      "POST server/discover",
      "POST initialize",
      "POST server/discover",
    ]);
    assert.equal(server.requests[2]!.headers["mcp-protocol-version"], MODERN);
    assert.equal(server.rpcMethods().includes("notifications/initialized"), false);
  });

  test("N1: initialize answered with an unknown version string fails version_mismatch", async (t) => {
    const server = await initializeAnswering(t, "2025-13-45");
    const o = await establish({ url: server.url });
    const error = failedAtOnce(o, "protocol", "version_mismatch");
    assert.match(error.message, /2025-13-45/, "names what the server offered");
    assert.equal(server.rpcMethods().includes("notifications/initialized"), false);
  });

  test("N8: initialize answered with the modern version 2026-07-28 is not a legacy handshake: version_mismatch", async (t) => {
    const server = await initializeAnswering(t, MODERN);
    const o = await establish({ url: server.url });
    failedAtOnce(o, "protocol", "version_mismatch");
    assert.equal(server.rpcMethods().includes("notifications/initialized"), false);
  });

  test("N4: initialize answered above the ceiling fails version_mismatch; the ceiling skips discover", async (t) => {
    const server = await initializeAnswering(t, "2025-11-25");
    const o = await establish({ url: server.url, maxProtocolVersion: "2025-06-18" });
    const error = failedAtOnce(o, "protocol", "version_mismatch");
    assert.match(error.message, /2025-11-25/);
    assert.equal(server.rpcMethods()[0], "initialize", "no server/discover under a legacy ceiling");
    assert.equal(server.rpcMethods().includes("server/discover"), false);
    assert.equal(server.requests[0]!.rpcParams?.protocolVersion, "2025-06-18", "asks for the ceiling");
    assert.equal(server.rpcMethods().includes("notifications/initialized"), false);
  });

  test("N3: under a legacy pin, initialize answered with another version fails version_mismatch naming it", async (t) => {
    const server = await initializeAnswering(t, "2025-03-26");
    const o = await establish({ url: server.url, protocolVersion: "2025-06-18" });
    const error = failedAtOnce(o, "protocol", "version_mismatch");
    assert.match(error.message, /2025-03-26/);
    assert.deepEqual(server.rpcMethods().slice(0, 1), ["initialize"]);
    assert.equal(server.requests[0]!.rpcParams?.protocolVersion, "2025-06-18");
  });
});

// ---------------------------------------------------------------- N8

describe("N8: eras never mix on the wire", () => {
  test("N8: legacy exchanges carry no Mcp-Method/Mcp-Name headers and no io.modelcontextprotocol/ _meta keys", async (t) => {
    const server = await legacyHttp(
      t,
      json(400, rpcError(null, -32000, "Bad Request: No valid session ID provided")),
    );
    const o = await establish({ url: server.url });
    const client = await expectEstablished(o, { era: "legacy", protocolVersion: "2025-11-25" });
    await client.listTools();
    const result = await client.callTool("echo", { text: "hi" });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    await client.close();
    const legacy = server.requests.slice(1);
    assert.deepEqual(
      legacy.map((r) => r.rpcMethod ?? r.method),
      ["initialize", "notifications/initialized", "tools/list", "tools/call", "DELETE"],
    );
    for (const r of legacy) {
      const label = r.rpcMethod ?? r.method;
      assert.equal(r.headers["mcp-method"], undefined, `${label}: no Mcp-Method`);
      assert.equal(r.headers["mcp-name"], undefined, `${label}: no Mcp-Name`);
      assert.deepEqual(
        Object.keys(r.headers).filter((h) => h.startsWith("mcp-param-")),
        [],
        `${label}: no Mcp-Param-*`,
      );
      assert.deepEqual(
        Object.keys(metaOf(r)).filter((k) => k.startsWith(META_PREFIX)),
        [],
        `${label}: no modern _meta keys`,
      );
    }
    for (const r of legacy.slice(1)) {
      assert.equal(r.headers["mcp-session-id"], HOSTILE_SESSION_ID, "the legacy session rides along");
    }
  });

  test("N8: modern requests carry every required _meta field and HTTP header, and no session", async (t) => {
    const server = await serveFor(t, modernStreamableHandler());
    const o = await establish({ url: server.url });
    const client = await expectEstablished(o, { era: "modern", protocolVersion: MODERN });
    await client.listTools();
    await client.callTool("echo", { text: "hi" });
    await client.close();
    assert.deepEqual(server.rpcMethods(), ["server/discover", "tools/list", "tools/call"]);
    assert.equal(server.requests.length, 3, "no GET, no DELETE on a modern connection");
    for (const r of server.requests) {
      const meta = metaOf(r);
      for (const key of MODERN_META_KEYS) assert.ok(key in meta, `${r.rpcMethod}: _meta has ${key}`);
      assert.equal(meta["io.modelcontextprotocol/protocolVersion"], MODERN);
      assert.equal(
        r.headers["mcp-protocol-version"],
        MODERN,
        `${r.rpcMethod}: header equals the _meta value`,
      );
      assert.equal(r.headers["mcp-method"], r.rpcMethod, `${r.rpcMethod}: Mcp-Method`);
      assert.equal(r.headers["mcp-session-id"], undefined, `${r.rpcMethod}: no session header`);
    }
    assert.equal(server.requests[2]!.headers["mcp-name"], "echo", "tools/call carries Mcp-Name");
    assert.equal(server.requests[1]!.headers["mcp-name"], undefined, "tools/list has no name");
  });

  test("N8: legacy stdio messages carry no io.modelcontextprotocol/ _meta keys", async () => {
    await withStdio(
      startStdioScript(legacyStdioServer({ discover: { reply: "error", code: -32601 } })),
      async (script) => {
        const o = await establish({ command: script.command, args: script.args });
        const client = await expectEstablished(o, { era: "legacy", protocolVersion: "2025-11-25" });
        await client.listTools();
        await client.callTool("echo", { text: "hi" });
        await client.close();
        const received = script.log().filter((e) => e.event === "recv");
        assert.deepEqual(
          received.map((e) => e.message?.method),
          ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"],
        );
        const probeMeta = stdioMeta(received[0]?.message);
        for (const key of MODERN_META_KEYS) assert.ok(key in probeMeta, `the probe carries ${key}`);
        for (const e of received.slice(1)) {
          assert.deepEqual(
            Object.keys(stdioMeta(e.message)).filter((k) => k.startsWith(META_PREFIX)),
            [],
            `${e.message?.method}: no modern _meta keys`,
          );
        }
      },
    );
  });
});
