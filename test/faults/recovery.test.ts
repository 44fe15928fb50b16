// Bounded fresh-attempt recovery (CONTRACT R1–R8, C6, E2) against hostile servers: loopback HTTP
// servers that destroy, hang or refuse chosen requests, a stdio script whose first process dies on
// `initialize`, and custom fetches that throw DNS, TLS, reset and application errors (alone and in
// aggregates). Each test counts what actually happened on both sides: `attempt_start` events,
// requests (or fetch calls, or processes) that reached the server, and recovery decisions.
//
// Every fault hits only the first request of its kind unless a test says otherwise, so a fresh
// attempt that should not have happened would succeed — an extra attempt cannot hide.
//
// In this process the loopback servers usually hold the event loop open, which would hide a
// library that lets it empty mid-establishment (a back-off or Retry-After wait on an unref'd
// timer); that is checked apart, in child processes that hold nothing else.
//
// Timing is never measured on the real clock. Where a limit, a back-off or a Retry-After wait
// is the point, the connection runs on a fake clock (`deps.clock`) that the test moves once the
// request in question reached the server, so each wait is exactly its value. Elsewhere the
// clock is the real one with a record of pending timers: "nothing more happened" is checked at
// once, as no timer of ours left that could start anything, instead of by watching a while.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  CLEANUP_GRACE_MS,
  type Client,
  type ConnectOptions,
  connect,
  type LifecycleEvent,
  TetherError,
} from "../../src/index.ts";
import { type ChildExit, runChildToExit } from "../helpers/child-exit.ts";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { recordingSpawn } from "../helpers/deadline-servers.ts";
import { askingRecovery } from "../helpers/failures.ts";
import { type FakeClock, type FakeTimer, fakeClock, trackedClock, until } from "../helpers/fake-clock.ts";
import {
  destroy,
  empty,
  type Handler,
  HOSTILE_SESSION_ID,
  type HostileServer,
  hang,
  hostileSet,
  legacyInitialize,
  legacyStdioServer,
  legacyStreamableHandler,
  type Recorded,
  type StdioScript,
} from "../helpers/hostile.ts";

/** A legacy pin and a ceiling below the modern era: both skip `server/discover`, so the first request is `initialize`. */
const PIN = "2025-06-18";
const CEILING = "2025-03-26";
/** Generous limits for tests whose fault is not a timer. */
const TIMEOUT_MS = 8_000;
const HANDSHAKE_TIMEOUT_MS = 3_000;
/** A handshake limit to wait out (on the fake clock). */
const SHORT_HANDSHAKE_MS = 250;
/** Where a failed HTTP exchange during a stage may be reported: the stage, or the request itself. */
const HTTP_STAGES = (stage: string) => ["http_request", stage];
/** Real time a test waits for an event (a request reaching the server) before calling it hung. */
const STUCK_MS = 20_000;

// Everything a test opens is closed in `after`, even when an assertion failed first.
const kept = hostileSet();
const dirs: string[] = [];
after(async () => {
  await kept.closeAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- connecting

interface Outcome {
  client?: Client;
  error?: unknown;
  events: LifecycleEvent[];
  /** The connection's clock: a fake one the test moves, or the real one with its pending timers. */
  clock: { pending(): unknown[] };
}

/** A connection under way: its outcome, and whether it has settled yet. */
interface Connecting {
  outcome: Promise<Outcome>;
  settled(): boolean;
}

/**
 * Starts connecting cold (no remembered era, no GET stream), recording lifecycle events, on the
 * clock in `options.deps` (a fake one) or else the real clock with a record of pending timers.
 */
function begin(options: ConnectOptions): Connecting {
  const events: LifecycleEvent[] = [];
  const clock = (options.deps?.clock as FakeClock | undefined) ?? trackedClock();
  let settled = false;
  const outcome = connect({
    timeoutMs: TIMEOUT_MS,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
    listen: false,
    eraHints: false,
    ...options,
    deps: { ...options.deps, clock },
    onEvent: (e) => {
      events.push(e);
      options.onEvent?.(e);
    },
  }).then(
    (client): Outcome => ({ client: kept.client(client), events, clock }),
    (error: unknown): Outcome => ({ error, events, clock }),
  );
  void outcome.then(() => {
    settled = true;
  });
  return { outcome, settled: () => settled };
}

async function establish(options: ConnectOptions): Promise<Outcome> {
  return await begin(options).outcome;
}

/** begin() under the legacy pin (so the first request is initialize), against a server or a stdio script. */
function beginPinned(
  target: { url: string } | StdioScript,
  settings: Partial<ConnectOptions> = {},
): Connecting {
  const where = "url" in target ? { url: target.url } : { command: target.command, args: target.args };
  return begin({ ...where, protocolVersion: PIN, ...settings } as ConnectOptions);
}

/** establish() under the legacy pin: beginPinned()'s outcome. */
function establishPinned(target: { url: string } | StdioScript, settings: Partial<ConnectOptions> = {}) {
  return beginPinned(target, settings).outcome;
}

/**
 * Nothing more will happen: no timer of ours is pending that could start an attempt, a back-off
 * or a resend. Checked the moment connect() settled, instead of watching a while for strays.
 */
function assertNothingPending(o: Outcome): void {
  assert.deepEqual(o.clock.pending(), [], "no timer of ours is left pending: nothing more can start");
}

/** Waits (real time, bounded) until `check` holds: an event, such as a request reaching the server. */
function arrived(check: () => boolean, what: string): Promise<void> {
  return until(check, STUCK_MS, what);
}

/** Moves the fake clock to the first pending timer `match` accepts, once one is set. */
async function fire(clock: FakeClock, match: (t: FakeTimer) => boolean): Promise<FakeTimer> {
  const t = await clock.timer(match, STUCK_MS);
  await clock.advanceTo(t);
  return t;
}

function connected(o: Outcome): Client {
  if (o.client) return o.client;
  const e = o.error as Partial<TetherError> | undefined;
  assert.fail(`connect failed: ${e?.code} (${e?.reason}) at ${e?.stage} after ${e?.attempts} attempt(s)`);
}

function failed(o: Outcome): TetherError {
  assert.equal(o.client, undefined, "connect should have failed");
  assert.ok(o.error instanceof TetherError, `a TetherError, not ${String(o.error)}`);
  return o.error;
}

function ofType<T extends LifecycleEvent["type"]>(
  events: LifecycleEvent[],
  type: T,
): Extract<LifecycleEvent, { type: T }>[] {
  return events.filter((e): e is Extract<LifecycleEvent, { type: T }> => e.type === type);
}

const attemptStarts = (events: LifecycleEvent[]) => ofType(events, "attempt_start").length;
const decisions = (events: LifecycleEvent[]) => ofType(events, "recovery").map((e) => e.decision);

// ---------------------------------------------------------------- servers

interface LegacyServer extends HostileServer {
  /** Requests whose JSON-RPC method (or, without one, HTTP method) is `key`, in order. */
  of(key: string): Recorded[];
  /** The TCP connection (numbered by first use) each request came on. */
  connectionOf(rec: Recorded): number;
  /** Distinct TCP connections that carried a request. */
  connections(): number;
  /** Session ids handed out, one per answered `initialize`, in order. */
  sessions: string[];
}

/**
 * A correct legacy Streamable HTTP server, except for `faults`: `faults[key][n]` answers the n-th
 * request whose JSON-RPC method (or HTTP method) is `key`; `faults["*"][n]` the n-th request of
 * any kind. Every answered `initialize` opens a new session, `session-<n>`; only the newest is live.
 */
async function legacyServer(faults: Partial<Record<string, Handler[]>> = {}): Promise<LegacyServer> {
  const sockets: Socket[] = [];
  const connection = new Map<Recorded, number>();
  const seen = new Map<string, number>();
  const sessions: string[] = [];
  let total = 0;
  const correct = legacyStreamableHandler();
  const handler: Handler = async (res, rec, req) => {
    if (!sockets.includes(req.socket)) sockets.push(req.socket);
    connection.set(rec, sockets.indexOf(req.socket));
    const key = rec.rpcMethod ?? rec.method;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    const fault = faults[key]?.[n] ?? faults["*"]?.[total];
    total++;
    if (fault) return await fault(res, rec, req);
    if (rec.rpcMethod === "initialize") {
      const id = `session-${sessions.length + 1}`;
      sessions.push(id);
      return legacyInitialize("recovery-legacy", id)(res, rec, req);
    }
    // The minimal server underneath knows one session id: map the live one onto it, and hide any other.
    const sid = rec.headers["mcp-session-id"];
    const live = sid !== undefined && sid === sessions.at(-1);
    const headers = { ...rec.headers, "mcp-session-id": live ? HOSTILE_SESSION_ID : undefined };
    return await correct(res, { ...rec, headers }, req);
  };
  const server = await kept.http(handler);
  return {
    ...server,
    of: (key) => server.requests.filter((r) => (r.rpcMethod ?? r.method) === key),
    connectionOf: (rec) => connection.get(rec) ?? -1,
    connections: () => sockets.length,
    sessions,
  };
}

const always = (h: Handler): Handler[] => Array.from({ length: 50 }, () => h);

function requestedVersion(rec: Recorded | undefined): unknown {
  return rec?.rpcParams?.protocolVersion;
}

// ---------------------------------------------------------------- stdio

/** A legacy stdio server whose first process exits as soon as it reads `initialize`; later processes behave. */
const EXITS_ON_FIRST_INITIALIZE = `
import { existsSync, writeFileSync } from "node:fs";
const MARKER = LOG_FILE + ".first-started";
if (!existsSync(MARKER)) {
  writeFileSync(MARKER, "");
  onMessage((m) => { if (m.method === "initialize") process.exit(0); });
} else {
${legacyStdioServer({ discover: { reply: "error", code: -32601 } })}
}
`;

const stdioServer = (source: string): StdioScript => kept.script(source);

function initializesOf(script: StdioScript, pid: number): unknown[] {
  return script
    .log()
    .filter((e) => e.pid === pid && e.event === "recv" && e.message?.method === "initialize")
    .map((e) => e.message?.params?.protocolVersion);
}

// ---------------------------------------------------------------- custom fetches

class AppSecurityError extends Error {}

/** What undici throws when a host name does not resolve. */
const dnsError = () =>
  Object.assign(new TypeError("fetch failed"), {
    cause: Object.assign(new Error("getaddrinfo ENOTFOUND example.invalid"), { code: "ENOTFOUND" }),
  });
/** What undici throws when the certificate does not name the host. */
const tlsError = () =>
  Object.assign(new TypeError("fetch failed"), {
    cause: Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
      code: "ERR_TLS_CERT_ALTNAME_INVALID",
    }),
  });
/** A plain reset: eligible on its own. */
const resetError = () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });

/** A fetch that throws `fault()` on its first call and hands every later call to the real fetch. */
function failFirst(fault: () => unknown): { fetch: typeof fetch; thrown: unknown[]; calls: () => number } {
  let calls = 0;
  const thrown: unknown[] = [];
  const f: typeof fetch = async (input, init) => {
    calls++;
    if (calls === 1) {
      const e = fault();
      thrown.push(e);
      throw e;
    }
    return await fetch(input, init);
  };
  return { fetch: f, thrown, calls: () => calls };
}

// ================================================================ fresh attempts

describe("R2: a failed establishment is followed by a fresh attempt", () => {
  test("R2: a stdio server that exits on its first initialize is replaced by a new process (new pid), pin kept (R6)", async () => {
    const script = stdioServer(EXITS_ON_FIRST_INITIALIZE);
    const o = await establishPinned(script, {
      recovery: { maxAttempts: 3, backoffMs: 10 },
    });
    const client = connected(o);
    assert.equal(client.protocolVersion, PIN);
    assert.equal(attemptStarts(o.events), 2, "two attempts, the second one established");
    const ends = ofType(o.events, "attempt_end");
    assert.deepEqual(
      ends.map((e) => [e.attempt, e.ok]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.equal(ends[0]?.code, "connection");
    assert.deepEqual(decisions(o.events), ["retry"]);
    assert.equal(ofType(o.events, "established")[0]?.attempt, 2);

    const pids = script.pids();
    assert.equal(pids.length, 2, "one process per attempt");
    assert.notEqual(pids[0], pids[1], "the second attempt runs in a new process");
    // R6: both processes were asked for exactly the pinned version.
    assert.deepEqual(initializesOf(script, pids[0]!), [PIN]);
    assert.deepEqual(initializesOf(script, pids[1]!), [PIN]);
    // The ready client talks to the new process.
    const result = await client.callTool("echo", { text: "on the new process" });
    assert.deepEqual(result.content, [{ type: "text", text: "on the new process" }]);
    assert.ok(script.received(pids[1]!).includes("tools/call"));
    assert.ok(!script.received(pids[0]!).includes("tools/call"));
  });

  test("R2: a connection destroyed mid-initialize is followed by a new TCP connection and a new session, pin kept (R6)", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    const o = await establishPinned(server, {
      recovery: { maxAttempts: 3, backoffMs: 10 },
    });
    const client = connected(o);
    assert.equal(client.protocolVersion, PIN);
    assert.equal(attemptStarts(o.events), 2);
    const first = ofType(o.events, "attempt_end")[0];
    assert.equal(first?.ok, false);
    assert.equal(first?.code, "connection");
    assert.ok(HTTP_STAGES("initialize").includes(first?.stage ?? ""), `stage ${first?.stage}`);
    assert.deepEqual(decisions(o.events), ["retry"]);

    const inits = server.of("initialize");
    assert.equal(inits.length, 2);
    assert.notEqual(
      server.connectionOf(inits[0]!),
      server.connectionOf(inits[1]!),
      "the second initialize came on a new TCP connection",
    );
    assert.ok(server.connections() >= 2);
    assert.deepEqual(inits.map(requestedVersion), [PIN, PIN], "R6: the pin is asked for in every attempt");
    assert.equal(
      inits[1]?.headers["mcp-session-id"],
      undefined,
      "the fresh attempt starts without a session",
    );
    assert.deepEqual(server.sessions, ["session-1"]);
    for (const r of server.requests.slice(server.requests.indexOf(inits[1]!) + 1))
      assert.equal(
        r.headers["mcp-session-id"],
        "session-1",
        `${r.method} ${r.rpcMethod ?? ""} on the new session`,
      );
  });

  test("R2: a session id from a failed attempt never reaches the next attempt", async () => {
    // The first attempt gets session-1, then its `notifications/initialized` POST is reset.
    const server = await legacyServer({ "notifications/initialized": [destroy()] });
    const o = await establishPinned(server, {
      recovery: { maxAttempts: 3, backoffMs: 10 },
    });
    const client = connected(o);
    assert.equal(attemptStarts(o.events), 2);
    const stage = ofType(o.events, "attempt_end")[0]?.stage ?? "";
    assert.ok(HTTP_STAGES("initialized").includes(stage), `stage ${stage}`);
    assert.deepEqual(server.sessions, ["session-1", "session-2"]);
    await client.listTools();
    const inits = server.of("initialize");
    assert.equal(inits.length, 2);
    assert.equal(
      inits[1]?.headers["mcp-session-id"],
      undefined,
      "the second initialize carries no old session",
    );
    const secondAttempt = server.requests.slice(server.requests.indexOf(inits[1]!) + 1);
    for (const r of secondAttempt.filter((r) => r.method !== "DELETE"))
      assert.equal(
        r.headers["mcp-session-id"],
        "session-2",
        `${r.method} ${r.rpcMethod ?? ""} uses the new session`,
      );
  });

  test("R2: an initialize that is never answered times out (handshake_timeout) and a fresh attempt succeeds, ceiling kept (R6)", async () => {
    const server = await legacyServer({ initialize: [hang()] });
    const clock = fakeClock();
    const c = begin({
      url: server.url,
      maxProtocolVersion: CEILING,
      handshakeTimeoutMs: SHORT_HANDSHAKE_MS,
      recovery: { maxAttempts: 3, backoffMs: 10 },
      deps: { clock },
    });
    await arrived(() => server.of("initialize").length === 1, "the first initialize");
    await fire(clock, (t) => t.ms === SHORT_HANDSHAKE_MS);
    await fire(clock, (t) => t.keepAlive && t.ms === 10);
    const o = await c.outcome;
    const client = connected(o);
    assert.equal(client.protocolVersion, CEILING);
    assert.equal(attemptStarts(o.events), 2);
    const first = ofType(o.events, "attempt_end")[0];
    assert.equal(first?.code, "timeout");
    assert.equal(first?.reason, "handshake_timeout");
    assert.deepEqual(decisions(o.events), ["retry"]);
    assert.equal(
      ofType(o.events, "attempt_start")[1]?.elapsedMs,
      SHORT_HANDSHAKE_MS + 10,
      "the second attempt started once the first waited out its limit, and then the back-off",
    );
    const inits = server.of("initialize");
    assert.deepEqual(inits.map(requestedVersion), [CEILING, CEILING], "R6: the ceiling in every attempt");
    assert.equal(inits[1]?.headers["mcp-session-id"], undefined);
    assert.equal(server.of("server/discover").length, 0, "a ceiling below 2026-07-28 never probes");
    assert.deepEqual(server.sessions, ["session-1"]);
  });
});

describe("R1: without recovery there is exactly one attempt", () => {
  test("R1: a stdio server that exits on initialize fails the one attempt; no second process", async () => {
    const script = stdioServer(EXITS_ON_FIRST_INITIALIZE);
    const spawned = recordingSpawn();
    const o = await establishPinned(script, {
      deps: { spawn: spawned.spawn },
    });
    const e = failed(o);
    assert.equal(e.code, "connection");
    assert.equal(e.attempts, 1);
    assert.equal(e.laterFailures.length, 0);
    assert.equal(e.recoveryStopped, undefined);
    assert.equal(attemptStarts(o.events), 1);
    assert.deepEqual(decisions(o.events), [], "no recovery decisions without recovery");
    assertNothingPending(o);
    assert.equal(spawned.pids.length, 1, "one process was started");
  });

  test("X1/D1: a stdio server that exits during initialize is reported at stage initialize, phase discovery", async () => {
    const script = stdioServer(EXITS_ON_FIRST_INITIALIZE);
    const o = await establish({ command: script.command, args: script.args, protocolVersion: PIN });
    const e = failed(o);
    assert.equal(e.code, "connection");
    const stageEnd = ofType(o.events, "stage_end").find((x) => !x.ok);
    assert.equal(stageEnd?.stage, "initialize", "the stage that failed, per stage_end");
    assert.deepEqual(
      [e.stage, e.phase],
      ["initialize", "discovery"],
      "the error names the establishment stage it failed in",
    );
    assert.equal(ofType(o.events, "attempt_end")[0]?.stage, "initialize");
  });

  test("R1: a connection destroyed mid-initialize fails the one attempt; initialize is sent once", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    assertSingleAttempt(await establishPinned(server), server);
  });

  test("R1: an initialize never answered fails the one attempt; initialize is sent once", async () => {
    const server = await legacyServer({ initialize: [hang()] });
    const clock = fakeClock();
    const c = beginPinned(server, {
      handshakeTimeoutMs: SHORT_HANDSHAKE_MS,
      deps: { clock },
    });
    await arrived(() => server.of("initialize").length === 1, "initialize");
    await fire(clock, (t) => t.ms === SHORT_HANDSHAKE_MS);
    const e = assertSingleAttempt(await c.outcome, server);
    assert.equal(e.reason, "handshake_timeout");
  });
});

/** The one attempt failed and nothing followed: no recovery decision, nothing pending, initialize sent once. */
function assertSingleAttempt(o: Outcome, server: { of(key: string): unknown[] }): TetherError {
  const e = failed(o);
  assert.equal(e.attempts, 1);
  assert.equal(e.recoveryStopped, undefined);
  assert.equal(attemptStarts(o.events), 1);
  assert.deepEqual(decisions(o.events), []);
  assertNothingPending(o);
  assert.equal(server.of("initialize").length, 1);
  return e;
}

// ================================================================ vetoes

/** Asserts that the failure stopped recovery at once: one attempt, a stop decision, no retry. */
function assertVetoed(o: Outcome): TetherError {
  const e = failed(o);
  assert.equal(attemptStarts(o.events), 1, "no further attempt starts");
  assert.deepEqual(decisions(o.events), ["stop"]);
  assert.equal(e.attempts, 1);
  assert.deepEqual(e.laterFailures, []);
  assert.ok(e.recoveryStopped !== undefined, "the error says why recovery stopped");
  assert.notEqual(e.recoveryStopped, "max_attempts");
  assert.equal(ofType(o.events, "recovery")[0]?.why, e.recoveryStopped);
  return e;
}

describe("R4: failures that are never retried", () => {
  for (const [status, code] of [
    [401, "unauthorized"],
    [403, "forbidden"],
  ] as const) {
    test(`R4: HTTP ${status} on initialize is never retried`, async () => {
      const server = await legacyServer({ initialize: [empty(status)] });
      const o = await establishPinned(server, { recovery: { maxAttempts: 5 } });
      const e = assertVetoed(o);
      assert.equal(e.code, code);
      assert.equal(e.httpStatus, status);
      assertNothingPending(o);
      assert.equal(server.requests.length, 1, "the server saw one request");
    });
  }

  test("R4: caller cancellation during initialize is never retried; the caller's reason is the cause", async () => {
    const server = await legacyServer({ initialize: [hang()] });
    const controller = new AbortController();
    const reason = new Error("the caller gave up");
    const c = beginPinned(server, {
      signal: controller.signal,
      recovery: { maxAttempts: 5, backoffMs: 1 },
    });
    await arrived(() => server.of("initialize").length === 1, "initialize");
    controller.abort(reason);
    const o = await c.outcome;
    const e = assertVetoed(o);
    assert.equal(e.code, "cancelled");
    assert.equal(e.cancellation, "caller");
    assert.equal(e.cause, reason);
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, 1);
  });

  test("R4/C6: caller cancellation during the back-off starts no attempt and is the error reported", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    const controller = new AbortController();
    const reason = new Error("the caller gave up while waiting");
    const clock = fakeClock();
    const c = beginPinned(server, {
      signal: controller.signal,
      recovery: { maxAttempts: 5, backoffMs: 5_000 },
      deps: { clock },
    });
    await clock.timer((t) => t.keepAlive && t.ms === 5_000, STUCK_MS);
    controller.abort(reason);
    const o = await c.outcome;
    const e = failed(o);
    assert.deepEqual(clock.fired(), [], "the back-off was cut short: it ended with no time passing");
    assert.equal(attemptStarts(o.events), 1, "no attempt after the cancellation");
    assert.equal(e.code, "cancelled", "C6: caller cancellation comes before the establishment failure");
    assert.equal(e.cause, reason);
    assert.equal(e.attempts, 1, "attempts counts the attempts made: one");
    assert.deepEqual(
      e.laterFailures.map((f) => f.code),
      ["connection"],
      "the first attempt's failure is attached",
    );
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, 1);
  });

  const vetoes = [
    { name: "a DNS failure", make: dnsError },
    { name: "a TLS failure", make: tlsError },
    { name: "an application-marked security error", make: () => new AppSecurityError("pinned key mismatch") },
  ];
  const isSecurityError = (e: unknown) => e instanceof AppSecurityError;
  for (const v of vetoes) {
    const shapes: [string, () => unknown][] = [
      ["alone", v.make],
      [
        "first in an AggregateError with an eligible reset (R5)",
        () => new AggregateError([v.make(), resetError()]),
      ],
      [
        "last in an AggregateError with an eligible reset (R5)",
        () => new AggregateError([resetError(), v.make()]),
      ],
    ];
    for (const [where, fault] of shapes) {
      test(`R4: ${v.name}, ${where}, is never retried`, async () => {
        const server = await legacyServer();
        const f = failFirst(fault);
        const o = await establishPinned(server, {
          deps: { fetch: f.fetch },
          recovery: { maxAttempts: 5, backoffMs: 1, isSecurityError },
        });
        const e = assertVetoed(o);
        assert.ok(HTTP_STAGES("initialize").includes(e.stage), `stage ${e.stage}`);
        assert.ok(
          e.cause === f.thrown[0] || (e.cause as { cause?: unknown } | undefined)?.cause === f.thrown[0],
          "the thrown error is kept in the cause chain",
        );
        assertNothingPending(o);
        assert.equal(f.calls(), 1, "one fetch in all");
        assert.equal(server.requests.length, 0, "a fresh attempt would have reached the server");
      });
    }
  }

  test("R5 (control): an AggregateError of eligible members alone is retried, and the retry succeeds", async () => {
    const server = await legacyServer();
    const f = failFirst(() => new AggregateError([resetError(), resetError()]));
    const o = await establishPinned(server, {
      deps: { fetch: f.fetch },
      recovery: { maxAttempts: 5, backoffMs: 1 },
    });
    connected(o);
    assert.equal(attemptStarts(o.events), 2);
    assert.deepEqual(decisions(o.events), ["retry"]);
    assert.equal(server.of("initialize").length, 1);
  });

  test("R4 (control): the application's error is retried when isSecurityError does not mark it", async () => {
    const server = await legacyServer();
    const f = failFirst(
      () => new AggregateError([new AppSecurityError("pinned key mismatch"), resetError()]),
    );
    const o = await establishPinned(server, {
      deps: { fetch: f.fetch },
      recovery: { maxAttempts: 5, backoffMs: 1 },
    });
    connected(o);
    assert.equal(attemptStarts(o.events), 2, "only the application's mark made it a veto above");
  });

  test("R3: isSecurityError is consulted with the application's own error object", async () => {
    const server = await legacyServer();
    const f = failFirst(() => new AppSecurityError("pinned key mismatch"));
    const asked: unknown[] = [];
    const o = await establishPinned(server, {
      deps: { fetch: f.fetch },
      recovery: {
        maxAttempts: 5,
        isSecurityError: (e) => {
          asked.push(e);
          return e instanceof AppSecurityError;
        },
      },
    });
    assertVetoed(o);
    assert.ok(asked.includes(f.thrown[0]), "the hook saw the very error the fetch threw");
  });
});

// ================================================================ the policy hook

describe("R3: shouldRetry narrows, never widens", () => {
  test("R3: shouldRetry returning false vetoes an eligible failure; it is told a payload-free failure", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    const asked: unknown[] = [];
    const o = await establishPinned(server, {
      recovery: askingRecovery(5, (failure) => asked.push(failure), false),
    });
    const e = assertVetoed(o);
    assert.equal(e.code, "connection");
    assert.equal(asked.length, 1);
    const info = asked[0] as Record<string, unknown>;
    assert.equal(info.attempt, 1);
    assert.equal(info.stage, e.stage);
    assert.equal(info.code, "connection");
    assert.equal(info.reason, e.reason);
    assert.equal(info.closure, e.closure);
    assert.ok("era" in info && "httpStatus" in info && "rpcCode" in info && "cancellation" in info);
    assert.equal(info.mode, "streamable-http");
    assert.equal(info.eligible, true);
    assert.equal(typeof info.elapsedMs, "number");
    assert.ok(!JSON.stringify(info).includes("127.0.0.1"), "no URL in what the policy is told");
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, 1);
  });

  test("R3: shouldRetry returning true lets eligible failures be retried, asked once per failed attempt", async () => {
    const server = await legacyServer({ initialize: [destroy(), destroy()] });
    const asked: number[] = [];
    const o = await establishPinned(server, {
      recovery: askingRecovery(5, (failure) => asked.push(failure.attempt), true),
    });
    const e = o.error as Partial<TetherError> | undefined;
    assert.equal(o.client !== undefined, true, `connected (not stopped by ${e?.recoveryStopped})`);
    assert.deepEqual(asked, [1, 2]);
    assert.equal(attemptStarts(o.events), 3);
    assert.deepEqual(decisions(o.events), ["retry", "retry"]);
  });

  test("R3: shouldRetry returning true cannot make a 401 eligible: it is not even asked", async () => {
    const server = await legacyServer({ initialize: [empty(401)] });
    let asked = 0;
    const o = await establishPinned(server, {
      recovery: askingRecovery(5, () => asked++, true),
    });
    const e = assertVetoed(o);
    assert.equal(e.code, "unauthorized");
    assert.equal(asked, 0);
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, 1);
  });

  test("R3/E4: a shouldRetry that never resolves is not awaited past the deadline plus the cleanup grace", async () => {
    const DEADLINE_MS = 600;
    const server = await legacyServer({ initialize: [destroy()] });
    let asked = 0;
    const clock = fakeClock();
    const c = beginPinned(server, {
      discovery: { timeoutMs: DEADLINE_MS },
      recovery: askingRecovery(5, () => asked++, new Promise<boolean>(() => {})),
      deps: { clock },
    });
    // The hook is raced against a timer that holds the process open: the deadline plus the grace.
    const grace = await clock.timer((t) => t.keepAlive && t.ms === DEADLINE_MS + CLEANUP_GRACE_MS, STUCK_MS);
    await arrived(() => asked === 1, "the hook was asked (else this test shows nothing)");
    await clock.advance(DEADLINE_MS);
    assert.equal(c.settled(), false, "the hook is given the grace past the deadline");
    await clock.advanceTo(grace);
    const o = await c.outcome;
    const e = failed(o);
    assert.equal(clock.now(), DEADLINE_MS + CLEANUP_GRACE_MS, "settled when the grace ended");
    assert.equal(attemptStarts(o.events), 1, "an unanswered hook is no permission to retry");
    assert.equal(e.code, "connection", "the establishment failure is reported");
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, 1);
  });
});

// ================================================================ after establishment

describe("R8: recovery covers establishment only", () => {
  test("R8/P8: a tools/call whose connection is destroyed is sent once and surfaces from callTool; the client is not replaced", async () => {
    const server = await legacyServer({ "tools/call": [destroy()] });
    const o = await establishPinned(server, {
      recovery: { maxAttempts: 5, backoffMs: 1 },
    });
    const client = connected(o);
    const eventsAtConnect = o.events.length;
    await assert.rejects(client.callTool("echo", { text: "exactly once" }), (e: unknown) => {
      assert.ok(e instanceof TetherError);
      assert.equal(e.phase, "call");
      assert.equal(e.stage, "call");
      return true;
    });
    // A later request on the same client: a re-sent call would have reached the server before it.
    await client.listTools();
    assert.equal(server.of("tools/call").length, 1, "the call was never re-sent");
    assert.equal(server.of("initialize").length, 1, "nothing was re-established behind the caller");
    assert.deepEqual(
      o.events.slice(eventsAtConnect).filter((e) => e.type === "attempt_start" || e.type === "recovery"),
      [],
      "no attempt or recovery decision after connect() returned",
    );
    assert.equal(attemptStarts(o.events), 1);
    assert.equal(ofType(o.events, "established").length, 1);
  });
});

// ================================================================ deadline and exhaustion

describe("E2/C6: attempts share one deadline, and exhaustion reports the first failure", () => {
  test("E2: with every attempt timing out, no attempt starts after the 600 ms deadline", async () => {
    const DEADLINE_MS = 600;
    const HANDSHAKE_MS = 150;
    const server = await legacyServer({ initialize: always(hang()) });
    const clock = fakeClock();
    const c = beginPinned(server, {
      discovery: { timeoutMs: DEADLINE_MS },
      handshakeTimeoutMs: HANDSHAKE_MS,
      recovery: { maxAttempts: 10, backoffMs: 1 },
      deps: { clock },
    });
    // Each attempt: once its initialize reached the server, move to its limit (the handshake's,
    // or the deadline once less than that remains), then through the back-off that follows.
    for (let n = 1; !c.settled(); n++) {
      await arrived(() => server.of("initialize").length === n || c.settled(), `initialize ${n}`);
      if (c.settled()) break;
      await fire(clock, (t) => !t.keepAlive);
      await arrived(() => c.settled() || clock.pending().some((t) => t.keepAlive), `back-off ${n}`);
      if (!c.settled()) await fire(clock, (t) => t.keepAlive);
    }
    const o = await c.outcome;
    const e = failed(o);
    assert.equal(e.code, "timeout");
    assert.equal(clock.now(), DEADLINE_MS, "it ended when the deadline fired");
    const starts = ofType(o.events, "attempt_start");
    // Attempts start at 0, 151, 303 and 457 ms (limits of 150 ms, back-offs of 1, 2 and 4 ms);
    // the fourth's handshake limit would end at 607 ms, so the deadline ends it at 600.
    assert.deepEqual(
      starts.map((s) => s.elapsedMs),
      [0, 151, 303, 457],
      "fresh attempts, all before the deadline",
    );
    for (const s of ofType(o.events, "stage_start"))
      assert.ok(s.elapsedMs < DEADLINE_MS, `${s.stage} started at ${s.elapsedMs} ms, after the deadline`);
    assert.notEqual(e.recoveryStopped, "max_attempts", "the deadline, not maxAttempts, ended it");
    assert.equal(decisions(o.events).at(-1), "stop");
    assert.equal(e.attempts, starts.length);
    assertNothingPending(o);
    assert.equal(server.of("initialize").length, starts.length, "one initialize per attempt, none after");
  });

  test("R2/E1: the back-off before each fresh attempt doubles, inside the deadline: 100 ms, then 200 ms", async () => {
    const server = await legacyServer({ initialize: [destroy(), destroy()] });
    const clock = fakeClock();
    const c = beginPinned(server, {
      recovery: { maxAttempts: 3, backoffMs: 100 },
      deps: { clock },
    });
    await arrived(() => server.of("initialize").length === 1, "the first initialize");
    const first = await clock.timer((t) => t.keepAlive, STUCK_MS);
    assert.equal(first.ms, 100, "the first back-off is backoffMs");
    await clock.advanceTo(first);
    await arrived(() => server.of("initialize").length === 2, "the second initialize");
    const second = await clock.timer((t) => t.keepAlive && t.id !== first.id, STUCK_MS);
    assert.equal(second.ms, 200, "the second back-off is twice the first");
    await clock.advanceTo(second);
    const o = await c.outcome;
    connected(o);
    assert.deepEqual(
      ofType(o.events, "attempt_start").map((s) => s.elapsedMs),
      [0, 100, 300],
      "each fresh attempt started when its back-off ended",
    );
  });

  test("E2: a back-off longer than what remains of the deadline stops recovery at once, without sleeping", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    const clock = fakeClock();
    const o = await establishPinned(server, {
      discovery: { timeoutMs: 800 },
      recovery: { maxAttempts: 3, backoffMs: 1_000 },
      deps: { clock },
    });
    const e = failed(o);
    assert.equal(e.code, "connection", "the establishment failure is reported");
    assert.equal(e.recoveryStopped, "deadline");
    assert.deepEqual(decisions(o.events), ["stop"]);
    assert.equal(attemptStarts(o.events), 1);
    assert.deepEqual(clock.fired(), [], "it stopped with the clock never moved: no back-off was slept");
    assertNothingPending(o);
  });

  test("C6: on exhaustion the first attempt's failure is reported, identity kept, later ones attached in order", async () => {
    const server = await legacyServer({ initialize: always(destroy()) });
    // Passes every request to the real fetch, keeping what it threw for each reset connection.
    const thrown: unknown[] = [];
    const recording: typeof fetch = async (input, init) => {
      try {
        return await fetch(input, init);
      } catch (error) {
        thrown.push(error);
        throw error;
      }
    };
    const o = await establishPinned(server, {
      deps: { fetch: recording },
      recovery: { maxAttempts: 3, backoffMs: 1 },
    });
    const e = failed(o);
    assert.equal(attemptStarts(o.events), 3);
    assert.deepEqual(decisions(o.events), ["retry", "retry", "stop"]);
    assert.equal(ofType(o.events, "recovery").at(-1)?.why, "max_attempts");
    assert.equal(e.recoveryStopped, "max_attempts");
    assert.equal(e.attempts, 3);
    assert.equal(e.attempt, 1, "the primary is the first attempt's failure");

    const ends = ofType(o.events, "attempt_end");
    assert.deepEqual(
      ends.map((x) => [x.attempt, x.ok]),
      [
        [1, false],
        [2, false],
        [3, false],
      ],
    );
    assert.deepEqual([e.code, e.reason, e.stage], [ends[0]?.code, ends[0]?.reason, ends[0]?.stage]);
    assert.equal(e.laterFailures.length, 2);
    e.laterFailures.forEach((later, i) => {
      assert.ok(later instanceof TetherError);
      assert.notEqual(later, e);
      assert.equal(later.attempt, i + 2, "in attempt order");
      const end = ends[i + 1];
      assert.deepEqual([later.code, later.reason, later.stage], [end?.code, end?.reason, end?.stage]);
    });
    assert.notEqual(e.laterFailures[0], e.laterFailures[1]);
    // Identity: each reported failure wraps the very error its own attempt's fetch threw.
    assert.equal(thrown.length, 3);
    assert.equal(e.cause, thrown[0], "the primary keeps the first attempt's original error");
    assert.equal(e.laterFailures[0]?.cause, thrown[1]);
    assert.equal(e.laterFailures[1]?.cause, thrown[2]);
    assert.equal(server.of("initialize").length, 3);
  });
});

// ================================================================ transient service failures

describe("R7: waiting out 429/503 is its own opt-in policy", () => {
  const unavailable = (seconds: number) => empty(503, { "retry-after": String(seconds) });

  test("R7: a 503 with Retry-After: 1 is waited out on the same transport and era, in one attempt", async () => {
    const server = await legacyServer({ initialize: [unavailable(1)] });
    const clock = fakeClock();
    let fetches = 0;
    const counting: typeof fetch = (input, init) => {
      fetches++;
      return fetch(input, init);
    };
    const c = beginPinned(server, {
      transientRetry: { maxRetries: 2 },
      deps: { clock, fetch: counting },
    });
    const wait = await clock.timer((t) => t.ms === 1_000, STUCK_MS);
    assert.equal(fetches, 1, "nothing more is sent while Retry-After runs");
    await clock.advanceTo(wait);
    const o = await c.outcome;
    const client = connected(o);
    assert.equal(clock.now(), 1_000, "it waited out Retry-After: 1, exactly");
    assert.equal(client.transportMode, "streamable-http");
    assert.equal(client.era, "legacy");
    assert.equal(client.protocolVersion, PIN);
    assert.equal(attemptStarts(o.events), 1, "one attempt: the same request asked again");
    assert.deepEqual(decisions(o.events), []);
    const inits = server.of("initialize");
    assert.equal(inits.length, 2, "the same initialize, asked again after the wait");
    assert.deepEqual(inits.map(requestedVersion), [PIN, PIN]);
    assert.ok(
      server.requests.every((r) => r.method === "POST" || r.method === "DELETE"),
      "no other transport was tried",
    );
  });

  test("R7 R1: the retry count is the establishment's: a later attempt does not get a fresh one", async () => {
    // Attempt 1: 503 (waited out, the one retry spent), then a reset (eligible for recovery).
    // Attempt 2: 503 again, with no retry left: the failure stands. A count per attempt would
    // wait again and connect on the fourth initialize.
    const server = await legacyServer({ initialize: [unavailable(1), destroy(), unavailable(1)] });
    const clock = fakeClock();
    const c = beginPinned(server, {
      transientRetry: { maxRetries: 1 },
      recovery: { maxAttempts: 3, backoffMs: 10 },
      deps: { clock },
    });
    await fire(clock, (t) => t.keepAlive && t.ms === 1_000);
    await fire(clock, (t) => t.keepAlive && t.ms === 10);
    const o = await c.outcome;
    const e = failed(o);
    // C6: the first attempt's failure is reported; attempt 2's 503, with no retry left, stopped recovery.
    assert.equal(e.reason, "reset");
    assert.equal(e.attempts, 2);
    assert.deepEqual(
      e.laterFailures.map((f) => [f.code, f.httpStatus]),
      [["upstream", 503]],
    );
    assert.equal(e.recoveryStopped, "not_transient");
    assert.equal(attemptStarts(o.events), 2);
    assert.equal(server.of("initialize").length, 3, "no second wait: one retry in all");
    assert.deepEqual(
      clock.fired().map((t) => t.ms),
      [1_000, 10],
      "one Retry-After wait and one back-off, nothing more",
    );
    assertNothingPending(o);
  });

  const atOnce: { name: string; retryAfterS: number; settings: Partial<ConnectOptions>; how: string }[] = [
    {
      name: "R7: without transientRetry the 503 fails at once as upstream",
      retryAfterS: 1,
      settings: {},
      how: "no wait: it failed with the clock never moved",
    },
    {
      name: "R7: a Retry-After longer than what remains of the deadline fails at once, without sleeping",
      retryAfterS: 30,
      settings: { discovery: { timeoutMs: 3_000 }, transientRetry: { maxRetries: 3 } },
      how: "failed at once, with the clock never moved: not at the deadline",
    },
  ];
  for (const row of atOnce) {
    test(row.name, async () => {
      const server = await legacyServer({ initialize: [unavailable(row.retryAfterS)] });
      const clock = fakeClock();
      const o = await establishPinned(server, { ...row.settings, deps: { clock } });
      const e = failed(o);
      assert.equal(e.code, "upstream");
      assert.equal(e.httpStatus, 503);
      assert.deepEqual(clock.fired(), [], row.how);
      assert.equal(attemptStarts(o.events), 1);
      assertNothingPending(o);
      assert.equal(server.of("initialize").length, 1);
    });
  }
});

// ================================================================ a bare program

// Each test runs its own child and server, so they run side by side.
describe("R2/E4: a bare program awaiting connect() is kept alive between attempts", {
  concurrency: 4,
}, () => {
  const BARE = fileURLToPath(new URL("../fixtures/recovery/bare-connect.ts", import.meta.url));

  async function bare(
    scenario: Record<string, unknown>,
  ): Promise<{ exit: ChildExit; line: Record<string, unknown> }> {
    const exit = await runChildToExit({
      file: BARE,
      env: { TETHER_SCENARIO: JSON.stringify(scenario) },
      exitWithinMs: 15_000,
    });
    const last = exit.stdout.trim().split("\n").at(-1) ?? "";
    let line: Record<string, unknown> = {};
    try {
      line = JSON.parse(last) as Record<string, unknown>;
    } catch {
      // No line: the process ended before connect() settled (see the assertion below).
    }
    return { exit, line };
  }

  function assertSettled(exit: ChildExit, line: Record<string, unknown>): void {
    assert.equal(
      exit.code,
      0,
      `the program ended (status ${exit.code}) before connect() settled, printing ${JSON.stringify(exit.stdout)}; ` +
        "status 13 means its event loop emptied while connect() was still pending",
    );
    assert.ok(line.outcome !== undefined, "connect() settled and the program said how");
  }

  test("R2: a stdio server that exits on its first initialize: the back-off holds the loop, the second attempt connects", async () => {
    const script = stdioServer(EXITS_ON_FIRST_INITIALIZE);
    const { exit, line } = await bare({
      options: {
        command: script.command,
        args: script.args,
        protocolVersion: PIN,
        recovery: { maxAttempts: 3, backoffMs: 50 },
      },
    });
    assertSettled(exit, line);
    assert.equal(line.outcome, "resolved");
    assert.equal(line.attemptStarts, 2);
    assert.equal(script.pids().length, 2);
  });

  test("R2: an HTTP connection destroyed mid-initialize: the back-off holds the loop, the second attempt connects", async () => {
    const server = await legacyServer({ initialize: [destroy()] });
    const { exit, line } = await bare({
      options: { url: server.url, protocolVersion: PIN, recovery: { maxAttempts: 3, backoffMs: 50 } },
    });
    assertSettled(exit, line);
    assert.equal(line.outcome, "resolved");
    assert.equal(line.attemptStarts, 2);
  });

  test("R7: a 503 with Retry-After: 1: the wait holds the loop, and the same request then succeeds", async () => {
    const server = await legacyServer({ initialize: [empty(503, { "retry-after": "1" })] });
    const { exit, line } = await bare({
      options: { url: server.url, protocolVersion: PIN, transientRetry: { maxRetries: 2 } },
    });
    assertSettled(exit, line);
    assert.equal(line.outcome, "resolved");
    assert.equal(server.of("initialize").length, 2);
  });

  test("E4: a shouldRetry that never resolves: connect() still settles (rejects) by the deadline plus the grace", async () => {
    const DEADLINE_MS = 600;
    const server = await legacyServer({ initialize: [destroy()] });
    const { exit, line } = await bare({
      options: {
        url: server.url,
        protocolVersion: PIN,
        discovery: { timeoutMs: DEADLINE_MS },
        recovery: { maxAttempts: 3, backoffMs: 1 },
      },
      hangingShouldRetry: true,
    });
    assertSettled(exit, line);
    assert.equal(line.outcome, "rejected");
    assert.equal(line.attempts, 1);
    assert.equal(line.hookCalls, 1, "the hook was asked (else this test shows nothing)");
  });
});

// ================================================================ the command line

describe("CLI: --retry", () => {
  function cacheEnv(): Record<string, string> {
    const dir = mkdtempSync(join(tmpdir(), "tether-recovery-cli-"));
    dirs.push(dir);
    return { TETHER_CACHE_DIR: dir };
  }

  test("R2: tools --retry 3 against a server that resets the first connection succeeds on a fresh attempt", async () => {
    const server = await legacyServer({ "*": [destroy()] });
    const run = await runCli(["tools", server.url, "--retry", "3", "--json", "--events"], {
      env: cacheEnv(),
    });
    assert.equal(run.code, 0, `exit 0; stderr: ${run.stderr}`);
    const tools = (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools;
    assert.deepEqual(
      tools.map((t) => t.name),
      ["echo"],
    );
    const events = run.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as LifecycleEvent);
    assert.equal(attemptStarts(events), 2);
    assert.deepEqual(decisions(events), ["retry"]);
    assert.ok(server.connections() >= 2, "the fresh attempt came on a new connection");
  });

  for (const n of ["0", "11"]) {
    test(`R1: --retry ${n} is a configuration error (exit 2) and nothing is sent`, async () => {
      const server = await legacyServer();
      const run = await runCli(["tools", server.url, "--retry", n], { env: cacheEnv() });
      assert.equal(run.code, 2, `stderr: ${run.stderr}`);
      assert.equal(run.stdout, "");
      assert.equal(errorRecord(run).code, "config");
      assert.equal(server.requests.length, 0);
    });
  }
});
