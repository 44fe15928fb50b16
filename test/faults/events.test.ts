// Lifecycle events (CONTRACT D1, D2, X2, K1): the sequence a connect emits, on the onEvent
// callback and the node:diagnostics_channel channel alike; listeners that fail cannot hurt the
// connection; and no event ever carries a URL, a header value, a session id, an environment value
// or anything a server echoed back.

import assert from "node:assert/strict";
import diagnostics from "node:diagnostics_channel";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  type ConnectOptions,
  connect,
  DIAGNOSTICS_CHANNEL,
  type LifecycleEvent,
  TetherError,
} from "../../src/index.ts";
import { LIBRARY_URL, runChildToExit } from "../helpers/child-exit.ts";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import {
  eventLog,
  fixtureSet,
  legacyHttp,
  legacyStdio,
  modernHttp,
  type Rec,
  sendJson,
  tetherErrorOf,
  timed,
} from "../helpers/deadline-servers.ts";
import { fakeClock, until } from "../helpers/fake-clock.ts";

const { serve, script, closeAll } = fixtureSet();
const cacheDir = mkdtempSync(join(tmpdir(), "tether-events-cache-"));
after(async () => {
  await closeAll();
  rmSync(cacheDir, { recursive: true, force: true });
});

const base = { eraHints: false, timeoutMs: 5_000, listen: false } as const satisfies Partial<ConnectOptions>;

const EVENT_TYPES = new Set([
  "attempt_start",
  "attempt_end",
  "stage_start",
  "stage_end",
  "era_evidence",
  "established",
  "closed",
]);

/** connect() with the options every test shares and an event log. */
async function connectLogged(target: ConnectOptions) {
  const log = eventLog();
  const client = await connect({ ...base, ...target, onEvent: log.onEvent });
  return { client, log };
}

/** The skeleton of these stages run one after another: each one's start, then its end. */
const paired = (...stages: string[]) =>
  stages.flatMap((stage) => [`stage_start:${stage}`, `stage_end:${stage}`]);

/** The events' skeleton: stage events as `stage_start:probe`, era evidence left out. */
function skeleton(events: LifecycleEvent[]): string[] {
  return events
    .filter((e) => e.type !== "era_evidence")
    .map((e) => (e.type === "stage_start" || e.type === "stage_end" ? `${e.type}:${e.stage}` : e.type));
}

/** D1: every event is well-formed, stages come in start/end pairs, and time moves forward. */
function assertWellFormed(events: LifecycleEvent[], mode: string): void {
  let open: string | undefined;
  let last = -1;
  for (const e of events) {
    assert.ok(EVENT_TYPES.has(e.type), `known type ${e.type}`);
    assert.equal(e.mode, mode, `${e.type} names the transport mode`);
    assert.equal(e.attempt, 1, `${e.type} names the attempt`);
    assert.equal(typeof e.elapsedMs, "number");
    assert.ok(Number.isFinite(e.elapsedMs) && e.elapsedMs >= 0, `${e.type} elapsedMs ${e.elapsedMs}`);
    if (e.type !== "closed") {
      assert.ok(e.elapsedMs >= last, `${e.type} elapsedMs goes forward`);
      last = e.elapsedMs;
    }
    if (e.type === "stage_start") {
      assert.equal(open, undefined, `stage ${e.stage} started while ${open} was open`);
      open = e.stage;
    }
    if (e.type === "stage_end") {
      assert.equal(e.stage, open, `stage_end ${e.stage} closes the open stage`);
      assert.equal(typeof e.durationMs, "number");
      open = undefined;
    }
  }
  assert.equal(open, undefined, "every stage that started ended");
}

/** The session id, path and query of every request, to look for in what we emitted. */
function wireSecrets(requests: Rec[]): string[] {
  return requests
    .flatMap((r) => [r.path, String(r.headers["mcp-session-id"] ?? "")])
    .filter((s) => s.length > 3);
}

describe("D1: the event sequence", () => {
  test("D1: a legacy Streamable HTTP connect: attempt_start, paired stages, established; close() adds closed", async () => {
    const server = await serve(legacyHttp());
    const { client, log } = await connectLogged({ url: server.url });
    assert.deepEqual(skeleton(log.events), [
      "attempt_start",
      ...paired("probe", "initialize", "initialized"),
      "attempt_end",
      "established",
    ]);
    await client.close();
    assert.deepEqual(skeleton(log.events).slice(-1), ["closed"]);
    assertWellFormed(log.events, "streamable-http");
    const probe = log.events.find((e) => e.type === "stage_end" && e.stage === "probe");
    assert.ok(
      probe?.type === "stage_end" && probe.ok === false && probe.httpStatus === 400,
      "the probe's refusal is described",
    );
    const evidence = log.events.find((e) => e.type === "era_evidence");
    assert.ok(evidence?.type === "era_evidence" && evidence.era === "legacy", "era evidence names legacy");
    const established = log.events.find((e) => e.type === "established");
    assert.ok(established?.type === "established");
    assert.equal(established.era, "legacy");
    assert.equal(established.protocolVersion, "2025-11-25");
    const end = log.events.find((e) => e.type === "attempt_end");
    assert.ok(end?.type === "attempt_end" && end.ok === true);
    const closed = log.events.at(-1);
    assert.ok(closed?.type === "closed" && closed.closure === "closed_by_client");
    assert.equal(log.events.filter((e) => e.type === "closed").length, 1, "closed is emitted once");
  });

  test("D1: a modern Streamable HTTP connect: one successful probe, then established", async () => {
    const server = await serve(modernHttp());
    const { client, log } = await connectLogged({ url: server.url });
    assert.deepEqual(skeleton(log.events), [
      "attempt_start",
      ...paired("probe"),
      "attempt_end",
      "established",
    ]);
    const established = log.events.find((e) => e.type === "established");
    assert.ok(established?.type === "established" && established.era === "modern");
    assert.equal(established.protocolVersion, "2026-07-28");
    await client.close();
    await client.close();
    assert.deepEqual(skeleton(log.events).slice(-1), ["closed"]);
    assert.equal(log.events.filter((e) => e.type === "closed").length, 1, "closed is emitted once");
    assertWellFormed(log.events, "streamable-http");
  });

  test("D1: a legacy stdio connect: spawn, probe, initialize, initialized, each paired", async () => {
    const s = script(legacyStdio());
    const { client, log } = await connectLogged({ command: s.command, args: s.args });
    await client.close();
    assert.deepEqual(skeleton(log.events), [
      "attempt_start",
      ...paired("spawn", "probe", "initialize", "initialized"),
      "attempt_end",
      "established",
      "closed",
    ]);
    assertWellFormed(log.events, "stdio");
  });

  test("D1: a stage that runs out of its own limit says which limit, distinct from the deadline", async () => {
    const server = await serve(legacyHttp({ discover: "rpc-32601", initialize: "hang" }));
    const log = eventLog();
    // On a fake clock, moved to the handshake limit once initialize reached the server.
    const clock = fakeClock();
    const connecting = timed(() =>
      connect({
        ...base,
        url: server.url,
        handshakeTimeoutMs: 200,
        timeoutMs: 2_000,
        onEvent: log.onEvent,
        deps: { clock },
      }),
    );
    await until(() => server.count("initialize") === 1, 20_000, "initialize arrived");
    await clock.advanceTo(await clock.timer((t) => t.ms === 200));
    const run = await connecting;
    assert.equal(tetherErrorOf(run).reason, "handshake_timeout");
    const failed = log.events.find((e) => e.type === "stage_end" && e.stage === "initialize");
    assert.ok(failed?.type === "stage_end" && failed.ok === false);
    assert.equal(failed.code, "timeout");
    assert.equal(failed.reason, "handshake_timeout", "the stage_end names the limit that ran out");
    const end = log.events.find((e) => e.type === "attempt_end");
    assert.ok(end?.type === "attempt_end" && end.ok === false && end.reason === "handshake_timeout");
    assertWellFormed(log.events, "streamable-http");
  });
});

describe("D1/D2: delivery", () => {
  test("D1: every event reaches both onEvent and the diagnostics channel, in the same order", async () => {
    const server = await serve(legacyHttp());
    const log = eventLog();
    const published: unknown[] = [];
    const subscriber = (message: unknown) => published.push(message);
    diagnostics.subscribe(DIAGNOSTICS_CHANNEL, subscriber);
    try {
      const client = await connect({ ...base, url: server.url, onEvent: log.onEvent });
      await client.close();
    } finally {
      diagnostics.unsubscribe(DIAGNOSTICS_CHANNEL, subscriber);
    }
    assert.ok(log.events.length >= 8);
    assert.deepEqual(published, log.events);
  });

  test("D2: a listener that throws on every event breaks nothing and delays nothing", async () => {
    const server = await serve(legacyHttp());
    let calls = 0;
    // A fake clock that never moves: whatever a throwing listener did, nothing waited on a timer.
    const clock = fakeClock();
    const noisy = await timed(async () => {
      const client = await connect({
        ...base,
        url: server.url,
        deps: { clock },
        onEvent: () => {
          calls++;
          throw new Error("listener failure");
        },
      });
      const result = await client.callTool("echo", { text: "still fine" });
      await client.close();
      return result;
    });
    assert.equal(noisy.error, undefined, `connect and call succeeded (${String(noisy.error)})`);
    assert.deepEqual(noisy.value?.content, [{ type: "text", text: "still fine" }]);
    assert.ok(calls >= 8, `the listener was called for every event (${calls})`);
    assert.deepEqual(clock.fired(), [], "nothing waited out a limit");
  });

  test("D2: an async listener that rejects on every event neither breaks the connection nor the process", async () => {
    const server = await serve(legacyHttp());
    const run = await runChildToExit({
      source: `
        import { connect } from ${JSON.stringify(LIBRARY_URL)};
        const client = await connect({
          url: process.env.TETHER_URL,
          eraHints: false,
          listen: false,
          timeoutMs: 5000,
          onEvent: async () => { throw new Error("async listener failure"); },
        });
        await client.callTool("echo", { text: "x" });
        await client.close();
        // A turn of the event loop: an unhandled rejection of the listener's would end the process first.
        await new Promise((resolve) => setImmediate(resolve));
        process.stdout.write("ok\\n");
      `,
      env: { TETHER_URL: server.url },
      exitWithinMs: 10_000,
    });
    assert.equal(run.code, 0, `the process survived its listener; stderr: ${run.stderr.slice(0, 600)}`);
    assert.equal(run.stdout.trim(), "ok");
  });
});

// ---------------------------------------------------------------- canaries

const QUERY_CANARY = "qryCANARY7d1e90ab";
const HEADER_CANARY = "hdrCANARY52c4f8e1";
const AUTH_CANARY = "authCANARYb3a6109c";
const ENV_CANARY = "envCANARY0f9e2d77";
const SESSION_CANARY = "sesCANARY4e8b2a13";
const CANARIES = [QUERY_CANARY, HEADER_CANARY, AUTH_CANARY, ENV_CANARY, SESSION_CANARY];

/** A server that echoes each request (path, query, headers, body) into its error replies. */
function echoingLegacy(): (rec: Rec, res: import("node:http").ServerResponse) => void {
  const echo = (rec: Rec) => `rejected ${rec.path} ${JSON.stringify(rec.headers)} ${rec.rawBody}`;
  return (rec, res) => {
    if (rec.rpcMethod === "server/discover")
      return void res.writeHead(400, { "content-type": "text/plain" }).end(echo(rec));
    if (rec.rpcMethod === "initialize")
      return void sendJson(res, 200, {
        jsonrpc: "2.0",
        id: rec.rpcId,
        error: { code: -32603, message: echo(rec) },
      });
    res.writeHead(404, { "content-type": "text/plain" }).end(echo(rec));
  };
}

function assertNoCanary(text: string, what: string, extra: string[] = []): void {
  for (const c of [...CANARIES, ...extra])
    assert.ok(!text.includes(c), `${what} contains ${c}: ${text.slice(0, 400)}`);
}

describe("D1/X2: no secret in any event", () => {
  test("D1: events carry no URL, header value, query secret or echoed text when a server echoes the request", async () => {
    const server = await serve(echoingLegacy());
    const log = eventLog();
    const run = await timed(() =>
      connect({
        ...base,
        url: `${server.url}?api_key=${QUERY_CANARY}`,
        headers: { authorization: `Bearer ${AUTH_CANARY}`, "x-api-key": HEADER_CANARY },
        onEvent: log.onEvent,
      }),
    );
    const e = tetherErrorOf(run);
    assert.ok(server.requests.length >= 2, "the server saw (and echoed) the secrets");
    const text = JSON.stringify(log.events);
    assertNoCanary(text, "the events", [server.origin, "127.0.0.1", "http://", "rejected", "Bearer"]);
    assertNoCanary(JSON.stringify(e.toJSON()), "X2: the error record", [server.origin]);
    assertNoCanary(e.message, "X2: the error message", [server.origin]);
  });

  test("D1: events of a successful session carry no session id, URL or credential", async () => {
    const server = await serve(legacyHttp({ sessionId: SESSION_CANARY }));
    const log = eventLog();
    const client = await connect({
      ...base,
      url: `${server.url}?api_key=${QUERY_CANARY}`,
      headers: { authorization: `Bearer ${AUTH_CANARY}` },
      onEvent: log.onEvent,
    });
    await client.callTool("echo", { text: "hello" });
    await client.close();
    assert.ok(
      server.requests.some((r) => r.headers["mcp-session-id"] === SESSION_CANARY),
      "the session id was used",
    );
    assertNoCanary(JSON.stringify(log.events), "the events", [
      server.origin,
      ...wireSecrets(server.requests),
    ]);
  });

  test("D1: events carry no stdio environment value when the server echoes it in errors and on stderr", async () => {
    const s = script(legacyStdio({ initialize: "error", echoEnv: "TETHER_TEST_SECRET" }));
    const log = eventLog();
    const run = await timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        env: { TETHER_TEST_SECRET: ENV_CANARY },
        serverStderr: "ignore",
        onEvent: log.onEvent,
      }),
    );
    const e = tetherErrorOf(run);
    assert.ok(TetherError.is(e));
    assertNoCanary(JSON.stringify(log.events), "the events", [s.file]);
    assertNoCanary(JSON.stringify(e.toJSON()), "X2: the error record");
  });
});

describe("K1/D1: the CLI's --events", () => {
  const built = existsSync(CLI_BIN);

  /** K1 with --events: event lines first, then exactly one error record, last; nothing on stdout. */
  function assertEventsThenRecord(run: { code: number | null; stdout: string; stderr: string }): void {
    assert.equal(run.stdout, "", "nothing on stdout");
    assert.notEqual(run.code, 0);
    const lines = run.stderr.trim().split("\n");
    assert.ok(lines.length >= 3, `events and a record on stderr: ${run.stderr}`);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const record = parsed.at(-1)!;
    assert.equal(record.type, "error", "the last line is the error record");
    for (const p of parsed.slice(0, -1))
      assert.ok(EVENT_TYPES.has(String(p.type)), `an event line: ${JSON.stringify(p)}`);
    assert.equal(parsed[0]!.type, "attempt_start");
    assert.ok(
      parsed.slice(0, -1).some((p) => p.type === "attempt_end"),
      "the attempt's end is reported",
    );
  }

  test("K1: --events prints events as JSON lines before the error record, and no canary anywhere (HTTP)", {
    skip: !built && "dist/ is not built (npm run build)",
  }, async () => {
    const server = await serve(echoingLegacy());
    const run = await runCli(
      [
        "tools",
        `${server.url}?api_key=${QUERY_CANARY}`,
        "-H",
        `Authorization: Bearer ${AUTH_CANARY}`,
        "-H",
        `X-Api-Key: ${HEADER_CANARY}`,
        "--events",
        "--timeout",
        "5000",
      ],
      { env: { TETHER_CACHE_DIR: cacheDir } },
    );
    assertEventsThenRecord(run);
    assertNoCanary(run.stderr + run.stdout, "the CLI's output", [server.origin]);
  });

  test("K1: --events prints events before the error record, and no canary anywhere (stdio env)", {
    skip: !built && "dist/ is not built (npm run build)",
  }, async () => {
    const s = script(legacyStdio({ initialize: "error", echoEnv: "TETHER_TEST_SECRET" }));
    const run = await runCli(
      [
        "tools",
        "--events",
        "--timeout",
        "5000",
        "-e",
        `TETHER_TEST_SECRET=${ENV_CANARY}`,
        "--",
        s.command,
        ...s.args,
      ],
      { env: { TETHER_CACHE_DIR: cacheDir } },
    );
    assertEventsThenRecord(run);
    assertNoCanary(run.stderr + run.stdout, "the CLI's output");
  });
});
