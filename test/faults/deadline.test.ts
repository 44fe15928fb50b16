// One establishment deadline (CONTRACT E1–E5, C4, C9) against hostile servers: loopback HTTP
// servers and tiny stdio scripts that stay silent, end streams early, name bad endpoints, ignore
// SIGTERM, or answer just as the caller cancels. Each test checks the outcome (code and reason),
// the stage it fired in, and that connect() settled within the deadline plus CLEANUP_GRACE_MS.
//
// Timing assertions are loose on purpose (a noisy two-core machine): timer outcomes must take at
// least 0.8 × their limit, and everything must settle by the documented bound.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  CLEANUP_GRACE_MS,
  type ConnectOptions,
  connect,
  type LifecycleEvent,
  type TetherError,
} from "../../src/index.ts";
import { runChildToExit } from "../helpers/child-exit.ts";
import {
  eventLog,
  eventually,
  isAlive,
  type Loopback,
  legacyHttp,
  legacySse,
  legacyStdio,
  loopback,
  modernHttp,
  neverSpawns,
  recordingSpawn,
  SESSION_ID,
  SILENT,
  SILENT_IGNORES_STDIN_END,
  STUBBORN,
  type StdioScript,
  stdioScript,
  tetherErrorOf,
  timed,
} from "../helpers/deadline-servers.ts";

/** The establishment deadline of most tests here. */
const DEADLINE_MS = 500;
/** E5 tests run on a long deadline, so "at once" is plainly not a timer firing. */
const LONG_DEADLINE_MS = 10_000;
const AT_ONCE_MS = 1_500;
/** How long after a stage starts a test cancels (so the stage is surely under way). */
const CANCEL_AFTER_MS = 100;

// Everything a test opens is closed in `after`, even when an assertion failed first.
const servers: Loopback[] = [];
const scripts: StdioScript[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const s of scripts) s.dispose();
});

async function serve(...args: Parameters<typeof loopback>): Promise<Loopback> {
  const s = await loopback(...args);
  servers.push(s);
  return s;
}

function script(source: string): StdioScript {
  const s = stdioScript(source);
  scripts.push(s);
  return s;
}

/** Options every test shares: no process-wide era memory, so earlier tests change nothing. */
const base = { eraHints: false } as const satisfies Partial<ConnectOptions>;

function assertTimedOut(e: TetherError, reason: string, stages: readonly string[]): void {
  assert.equal(e.code, "timeout", `code (reason ${e.reason}, stage ${e.stage})`);
  assert.equal(e.reason, reason, `reason (stage ${e.stage})`);
  assert.ok(stages.includes(e.stage), `stage ${e.stage} is one of ${stages.join(", ")}`);
  assert.equal(e.phase, "discovery");
}

function assertSettledByDeadline(ms: number, deadlineMs: number, limitMs = deadlineMs): void {
  assert.ok(ms >= 0.8 * limitMs, `a timer outcome after ${Math.round(ms)} ms, before 0.8 × ${limitMs} ms`);
  assert.ok(
    ms <= deadlineMs + CLEANUP_GRACE_MS,
    `settled after ${Math.round(ms)} ms, past the ${deadlineMs} ms deadline + ${CLEANUP_GRACE_MS} ms grace`,
  );
}

/**
 * E2: no stage starts once the deadline has expired. A stage that starts within TIMER_SLACK_MS of
 * the deadline is let pass: the deadline is a timer, and a busy event loop runs timers late.
 */
const TIMER_SLACK_MS = 50;
function assertNoStageAfterDeadline(events: LifecycleEvent[], deadlineMs: number): void {
  const late = events.filter((e) => e.type === "stage_start" && e.elapsedMs >= deadlineMs + TIMER_SLACK_MS);
  assert.deepEqual(late, [], "a stage started after the deadline expired");
}

function assertCancelled(e: TetherError, reason: unknown, stages: readonly string[]): void {
  assert.equal(e.code, "cancelled", `code (reason ${e.reason}, stage ${e.stage})`);
  assert.equal(e.reason, "cancelled");
  assert.equal(e.cancellation, "caller");
  assert.equal(e.cause, reason, "the caller's reason is kept as cause");
  assert.ok(stages.includes(e.stage), `stage ${e.stage} is one of ${stages.join(", ")}`);
}

/** A controller and an onEvent that aborts it CANCEL_AFTER_MS after `stage` starts. */
function cancelDuring(stage: string) {
  const controller = new AbortController();
  const reason = new Error(`the caller gave up during ${stage}`);
  const log = eventLog();
  let scheduled = false;
  const startsAfterAbort: LifecycleEvent[] = [];
  const onEvent = (e: LifecycleEvent) => {
    log.onEvent(e);
    if (controller.signal.aborted && e.type === "stage_start") startsAfterAbort.push(e);
    if (e.type === "stage_start" && e.stage === stage && !scheduled) {
      scheduled = true;
      setTimeout(() => controller.abort(reason), CANCEL_AFTER_MS);
    }
  };
  return { signal: controller.signal, reason, onEvent, log, startsAfterAbort };
}

// ---------------------------------------------------------------- silent HTTP

describe("E1: a silent HTTP server", () => {
  test("E1: a POST that never sends headers fails with deadline_exceeded when the deadline ends", async () => {
    const server = await serve(legacyHttp({ discover: "hang", initialize: "hang" }));
    const log = eventLog();
    const run = await timed(() =>
      connect({ ...base, url: server.url, timeoutMs: DEADLINE_MS, onEvent: log.onEvent }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["http_request", "probe"]);
    assert.equal(e.cancellation, "deadline");
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    assertNoStageAfterDeadline(log.events, DEADLINE_MS);
    assert.ok(
      await eventually(() => server.openRequests() === 0, 1_000),
      "E4: the request in flight was aborted",
    );
  });

  test("E1: with the probe skipped (ceiling 2025-11-25), a silent initialize POST fails with deadline_exceeded", async () => {
    const server = await serve(legacyHttp({ initialize: "hang" }));
    const log = eventLog();
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        maxProtocolVersion: "2025-11-25",
        timeoutMs: DEADLINE_MS,
        onEvent: log.onEvent,
      }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["http_request", "initialize"]);
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    assert.equal(server.count("server/discover"), 0, "N4: a ceiling below 2026-07-28 skips the probe");
    assertNoStageAfterDeadline(log.events, DEADLINE_MS);
    assert.ok(
      await eventually(() => server.openRequests() === 0, 1_000),
      "E4: the request in flight was aborted",
    );
  });

  test("E1: the deadline covers tool listing (prefetchTools): a silent tools/list ends with deadline_exceeded", async () => {
    const server = await serve(legacyHttp({ toolsList: "hang-sse" }));
    const run = await timed(() =>
      connect({ ...base, url: server.url, listen: false, prefetchTools: true, timeoutMs: DEADLINE_MS }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["list_tools"]);
    assert.equal(e.cancellation, "deadline", "the deadline, not the caller, ended it");
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    assert.ok(await eventually(() => server.count("DELETE") === 1, 1_500), "the session was ended (DELETE)");
  });
});

// ---------------------------------------------------------------- HTTP+SSE endpoint

describe("E1/E5: the HTTP+SSE endpoint event", () => {
  test("E1: a GET that never sends headers fails in sse_endpoint with deadline_exceeded", async () => {
    const server = await serve(legacySse({ kind: "no-headers" }), "/sse");
    const run = await timed(() =>
      connect({ ...base, url: server.url, transport: "sse", timeoutMs: DEADLINE_MS }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["sse_endpoint"]);
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    assert.ok(
      await eventually(() => server.openRequests() === 0, 1_000),
      "E4: the GET in flight was aborted",
    );
  });

  test("E1: a stream that never sends its endpoint event fails in sse_endpoint with deadline_exceeded", async () => {
    const server = await serve(legacySse({ kind: "silent" }), "/sse");
    const log = eventLog();
    const run = await timed(() =>
      connect({ ...base, url: server.url, transport: "sse", timeoutMs: DEADLINE_MS, onEvent: log.onEvent }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["sse_endpoint"]);
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    assertNoStageAfterDeadline(log.events, DEADLINE_MS);
    assert.ok(await eventually(() => server.openRequests() === 0, 1_000), "E4: the event stream was closed");
  });

  test("E5: a stream that ends before its endpoint event fails at once with a connection error", async () => {
    const server = await serve(legacySse({ kind: "end" }), "/sse");
    const run = await timed(() =>
      connect({ ...base, url: server.url, transport: "sse", timeoutMs: LONG_DEADLINE_MS }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "connection", `code (reason ${e.reason})`);
    assert.equal(e.stage, "sse_endpoint");
    assert.ok(run.ms < AT_ONCE_MS, `failed after ${Math.round(run.ms)} ms, not at once`);
  });

  const endpoints: [string, string][] = [
    ["an empty endpoint", ""],
    ["a blank endpoint", "   "],
    ["a malformed endpoint", "http://[::1"],
    ["a cross-origin endpoint", "http://other.example/x"],
  ];
  for (const [label, data] of endpoints) {
    test(`E5: ${label} fails at once with a protocol error`, async () => {
      const server = await serve(legacySse({ kind: "endpoint", data }), "/sse");
      const run = await timed(() =>
        connect({ ...base, url: server.url, transport: "sse", timeoutMs: LONG_DEADLINE_MS }),
      );
      const e = tetherErrorOf(run);
      assert.equal(e.code, "protocol", `code (reason ${e.reason})`);
      assert.equal(e.stage, "sse_endpoint");
      assert.ok(run.ms < AT_ONCE_MS, `failed after ${Math.round(run.ms)} ms, not at once`);
      assert.equal(
        server.requests.filter((r) => r.method === "POST").length,
        0,
        "nothing was POSTed anywhere",
      );
      assert.ok(await eventually(() => server.openRequests() === 0, 1_000), "the event stream was closed");
    });
  }
});

// ---------------------------------------------------------------- handshake

describe("E3: initialize never answered", () => {
  test("E3: a handshake limit below the deadline ends a silent initialize with handshake_timeout", async () => {
    const server = await serve(legacyHttp({ initialize: "hang-sse" }));
    const log = eventLog();
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        maxProtocolVersion: "2025-11-25",
        handshakeTimeoutMs: 250,
        timeoutMs: 2_000,
        onEvent: log.onEvent,
      }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "handshake_timeout", ["initialize"]);
    assertSettledByDeadline(run.ms, 2_000, 250);
    assert.ok(
      run.ms < 2_000,
      `the handshake limit fired after ${Math.round(run.ms)} ms, not before the deadline`,
    );
    assert.equal(
      log.events.filter((x) => x.type === "attempt_start").length,
      1,
      "R1: one attempt, no recovery",
    );
    assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
  });

  test("E3: a handshake limit above the deadline leaves the deadline to fire: deadline_exceeded", async () => {
    const server = await serve(legacyHttp({ initialize: "hang-sse" }));
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        maxProtocolVersion: "2025-11-25",
        handshakeTimeoutMs: 5_000,
        timeoutMs: DEADLINE_MS,
      }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["initialize"]);
    assertSettledByDeadline(run.ms, DEADLINE_MS);
  });

  test("E3: after a probe answered -32601, a silent initialize ends with handshake_timeout", async () => {
    const server = await serve(legacyHttp({ discover: "rpc-32601", initialize: "hang" }));
    const log = eventLog();
    const run = await timed(() =>
      connect({ ...base, url: server.url, handshakeTimeoutMs: 250, timeoutMs: 2_000, onEvent: log.onEvent }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "handshake_timeout", ["initialize"]);
    assert.ok(
      run.ms < 2_000,
      `the handshake limit fired after ${Math.round(run.ms)} ms, not before the deadline`,
    );
    assert.deepEqual(
      server.requests.map((r) => r.rpcMethod),
      ["server/discover", "initialize"],
      "probe, then initialize, then nothing",
    );
    assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
  });

  test("E3: a stdio server that refuses the probe and never answers initialize: handshake_timeout, process gone", async () => {
    const s = script(legacyStdio({ probe: "rpc-32601", initialize: "silent" }));
    const run = await timed(() =>
      connect({ ...base, command: s.command, args: s.args, handshakeTimeoutMs: 250, timeoutMs: 2_000 }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "handshake_timeout", ["initialize"]);
    assertSettledByDeadline(run.ms, 2_000, 250);
    const pids = s.pids();
    assert.equal(pids.length, 1, "one process: a refused probe leaves the channel usable");
    assert.deepEqual(s.received(pids[0]!), ["server/discover", "initialize"]);
    assert.equal(isAlive(pids[0]!), false, "the process is gone once connect() settled");
  });
});

// ---------------------------------------------------------------- silent stdio

describe("E1/E4: silent and stubborn stdio servers", () => {
  test("N6/E1: a silent probe gives way to a fresh process; with every process silent the deadline ends it", async () => {
    const s = script(SILENT);
    // Generous: on a loaded machine a node process takes a while to start reading its stdin.
    const deadline = 2_000;
    const log = eventLog();
    const spawned = recordingSpawn();
    const run = await timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        probeTimeoutMs: 200,
        timeoutMs: deadline,
        onEvent: log.onEvent,
        deps: { spawn: spawned.spawn },
      }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["initialize"]);
    assertSettledByDeadline(run.ms, deadline);
    const pids = spawned.pids;
    assert.equal(pids.length, 2, "a fresh process after the silent probe");
    // The first process may die before it logs the probe; what matters is it never got initialize.
    assert.ok(
      !s.received(pids[0]!).includes("initialize"),
      "N6: initialize never went to the probed process",
    );
    assert.ok(!s.received(pids[1]!).includes("server/discover"), "the fresh process was not probed again");
    for (const pid of pids) assert.equal(isAlive(pid), false, `process ${pid} is gone`);
    assertNoStageAfterDeadline(log.events, deadline);
  });

  test("E4: a stdio server that ignores SIGTERM and its stdin's end is killed within the grace", async () => {
    const s = script(STUBBORN);
    const log = eventLog();
    const run = await timed(() =>
      connect({ ...base, command: s.command, args: s.args, timeoutMs: DEADLINE_MS, onEvent: log.onEvent }),
    );
    const e = tetherErrorOf(run);
    assertTimedOut(e, "deadline_exceeded", ["spawn", "probe"]);
    assertSettledByDeadline(run.ms, DEADLINE_MS);
    const pids = s.pids();
    assert.equal(pids.length, 1);
    assert.equal(isAlive(pids[0]!), false, "the stubborn process is gone once connect() settled");
    assert.ok(
      s.log().some((l) => (l.event as string) === "sigterm"),
      "it was asked to stop (SIGTERM) before it was killed",
    );
    assertNoStageAfterDeadline(log.events, DEADLINE_MS);
  });

  test("E2: when the deadline passes while a silent probe's process is being stopped, no fresh process starts", async () => {
    // The probe gives up at 200 ms; stopping a process that ignores its stdin's end takes longer
    // than what remains of the 450 ms deadline, so the fresh attempt at initialize must not start.
    const s = script(SILENT_IGNORES_STDIN_END);
    const deadline = 450;
    const log = eventLog();
    const spawned = recordingSpawn();
    const run = await timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        probeTimeoutMs: 200,
        timeoutMs: deadline,
        onEvent: log.onEvent,
        deps: { spawn: spawned.spawn },
      }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "timeout", `code (reason ${e.reason}, stage ${e.stage})`);
    assert.equal(e.reason, "deadline_exceeded");
    assert.ok(run.ms <= deadline + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assertNoStageAfterDeadline(log.events, deadline);
    assert.equal(spawned.pids.length, 1, "no fresh process was spawned after the deadline");
    for (const pid of spawned.pids) assert.equal(isAlive(pid), false, `process ${pid} is gone`);
  });
});

// ---------------------------------------------------------------- caller cancellation

describe("E3: caller cancellation at each stage", () => {
  test("E3: cancelling during spawn rejects with cancelled, the caller's reason as cause", async () => {
    const fake = neverSpawns();
    const c = cancelDuring("spawn");
    const run = await timed(() =>
      connect({
        ...base,
        command: "never-started",
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
        deps: { spawn: fake.spawn },
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["spawn"]);
    assert.ok(run.ms < CANCEL_AFTER_MS + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assert.equal(fake.calls(), 1);
    assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
  });

  test("E3: cancelling during a stdio probe rejects with cancelled and stops the process", async () => {
    const s = script(SILENT);
    const c = cancelDuring("probe");
    const spawned = recordingSpawn();
    const run = await timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
        deps: { spawn: spawned.spawn },
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["probe"]);
    assert.ok(run.ms < CANCEL_AFTER_MS + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assert.equal(spawned.pids.length, 1, "no fresh process after a cancelled probe");
    assert.equal(isAlive(spawned.pids[0]!), false, "the process is gone");
    assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
  });

  test("E3: cancelling during an HTTP request that never answers rejects with cancelled and aborts the request", async () => {
    const server = await serve(legacyHttp({ discover: "hang" }));
    const c = cancelDuring("probe");
    const run = await timed(() =>
      connect({ ...base, url: server.url, signal: c.signal, onEvent: c.onEvent, timeoutMs: 10_000 }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["http_request", "probe"]);
    assert.ok(run.ms < CANCEL_AFTER_MS + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assert.ok(
      await eventually(() => server.openRequests() === 0, 1_000),
      "the request in flight was aborted",
    );
    assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
  });

  test("E3: cancelling while waiting for the HTTP+SSE endpoint rejects with cancelled and closes the stream", async () => {
    const server = await serve(legacySse({ kind: "silent" }), "/sse");
    const c = cancelDuring("sse_endpoint");
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        transport: "sse",
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["sse_endpoint"]);
    assert.ok(run.ms < CANCEL_AFTER_MS + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assert.ok(await eventually(() => server.openRequests() === 0, 1_000), "the event stream was closed");
  });

  test("E3: cancelling during initialize rejects with cancelled and sends nothing more", async () => {
    const server = await serve(legacyHttp({ initialize: "hang-sse" }));
    const c = cancelDuring("initialize");
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        maxProtocolVersion: "2025-11-25",
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["initialize"]);
    assert.ok(run.ms < CANCEL_AFTER_MS + CLEANUP_GRACE_MS, `settled after ${Math.round(run.ms)} ms`);
    assert.deepEqual(
      server.requests.map((r) => r.rpcMethod ?? r.method),
      ["initialize"],
    );
    assert.ok(await eventually(() => server.openRequests() === 0, 1_000), "the reply stream was closed");
  });

  test("E2: a signal that is already aborted rejects with cancelled before any I/O", async () => {
    const server = await serve(legacyHttp());
    const s = script(SILENT);
    const reason = new Error("cancelled before it began");
    for (const target of [{ url: server.url }, { command: s.command, args: s.args }]) {
      const log = eventLog();
      const run = await timed(() =>
        connect({ ...base, ...target, signal: AbortSignal.abort(reason), onEvent: log.onEvent }),
      );
      const e = tetherErrorOf(run);
      assert.equal(e.code, "cancelled");
      assert.equal(e.cause, reason);
      assert.deepEqual(
        log.events.filter((x) => x.type === "stage_start"),
        [],
        "no stage started",
      );
    }
    assert.equal(server.requests.length, 0, "no HTTP request was made");
    assert.equal(s.pids().length, 0, "no process was started");
  });
});

// ---------------------------------------------------------------- C4

describe("C4: cancellation or expiry just as the handshake succeeds", () => {
  /** An onEvent that aborts as soon as `stage` ends successfully, and remembers the events after. */
  function abortOnSuccessOf(stage: string) {
    const controller = new AbortController();
    const reason = new Error(`cancelled as ${stage} succeeded`);
    const log = eventLog();
    let abortIndex = -1;
    const onEvent = (e: LifecycleEvent) => {
      log.onEvent(e);
      if (abortIndex === -1 && e.type === "stage_end" && e.ok && e.stage === stage) {
        abortIndex = log.events.length;
        controller.abort(reason);
      }
    };
    return {
      signal: controller.signal,
      reason,
      onEvent,
      log,
      startsAfterAbort: () => log.events.slice(abortIndex).filter((x) => x.type === "stage_start"),
    };
  }

  test("C4: cancelling as initialize succeeds (legacy HTTP) rejects, ends the session with one DELETE, starts nothing", async () => {
    const server = await serve(legacyHttp());
    const c = abortOnSuccessOf("initialize");
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        listen: false,
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["initialize", "initialized"]);
    assert.deepEqual(c.startsAfterAbort(), [], "C4: no later stage starts");
    assert.equal(server.count("notifications/initialized"), 0, "notifications/initialized was not sent");
    assert.ok(await eventually(() => server.count("DELETE") >= 1, 1_500), "the session we opened was ended");
    const deletes = server.requests.filter((r) => r.method === "DELETE");
    assert.equal(deletes.length, 1, "exactly one DELETE");
    assert.equal(deletes[0]!.headers["mcp-session-id"], SESSION_ID);
  });

  test("C4: cancelling as the last establishment stage succeeds rejects, disposes the client, reports that stage", async () => {
    const server = await serve(legacyHttp());
    const c = abortOnSuccessOf("initialized");
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        listen: false,
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "cancelled");
    assert.equal(e.cancellation, "caller");
    assert.equal(e.cause, c.reason);
    // No tool listing was asked for: the cancellation came as `initialized` finished.
    assert.equal(e.stage, "initialized", "the stage reported is the one that had just finished");
    assert.equal(
      c.log.events.filter((x) => x.type === "established").length,
      0,
      "never reported established",
    );
    assert.ok(await eventually(() => server.count("DELETE") >= 1, 1_500), "the client was disposed (DELETE)");
    assert.equal(server.count("DELETE"), 1);
  });

  test("C4: cancelling as initialized succeeds with prefetchTools rejects and never lists tools", async () => {
    const server = await serve(legacyHttp());
    const c = abortOnSuccessOf("initialized");
    const run = await timed(() =>
      connect({
        ...base,
        url: server.url,
        listen: false,
        prefetchTools: true,
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "cancelled");
    assert.equal(e.cause, c.reason);
    assert.equal(server.count("tools/list"), 0, "tools/list was not sent after the cancellation");
    assert.ok(
      await eventually(() => server.count("DELETE") === 1, 1_500),
      "the client was disposed (DELETE)",
    );
  });

  test("C4: cancelling as initialize succeeds (stdio) rejects and the process is gone", async () => {
    const s = script(legacyStdio());
    const c = abortOnSuccessOf("initialize");
    const run = await timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        signal: c.signal,
        onEvent: c.onEvent,
        timeoutMs: 10_000,
      }),
    );
    const e = tetherErrorOf(run);
    assertCancelled(e, c.reason, ["initialize", "initialized"]);
    assert.deepEqual(c.startsAfterAbort(), [], "C4: no later stage starts");
    const pids = s.pids();
    assert.equal(pids.length, 1);
    assert.ok(
      !s.received(pids[0]!).includes("notifications/initialized"),
      "notifications/initialized was not sent",
    );
    assert.equal(isAlive(pids[0]!), false, "the process is gone once connect() settled");
  });

  test("C4: cancelling as a modern server/discover succeeds rejects, and nothing more is sent", async () => {
    const server = await serve(modernHttp());
    const c = abortOnSuccessOf("probe");
    const run = await timed(() =>
      connect({ ...base, url: server.url, signal: c.signal, onEvent: c.onEvent, timeoutMs: 10_000 }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "cancelled");
    assert.equal(e.cause, c.reason);
    assert.deepEqual(c.startsAfterAbort(), []);
    assert.deepEqual(
      server.requests.map((r) => r.rpcMethod ?? r.method),
      ["server/discover"],
    );
  });

  test("C4: the deadline expiring as initialize succeeds rejects with deadline_exceeded and ends the session", async () => {
    // A clock seam whose deadline timer the test fires early, from inside the event listener.
    const timeoutMs = 10_000;
    const timers: { fn: () => void; ms: number }[] = [];
    const clock = {
      now: () => performance.now(),
      setTimeout: (fn: () => void, ms: number) => {
        timers.push({ fn, ms });
        const t = setTimeout(fn, ms);
        t.unref();
        return t;
      },
      clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
    };
    const server = await serve(legacyHttp());
    const log = eventLog();
    let fired = -1;
    const onEvent = (e: LifecycleEvent) => {
      log.onEvent(e);
      if (fired === -1 && e.type === "stage_end" && e.ok && e.stage === "initialize") {
        fired = log.events.length;
        const deadline = timers.find((t) => t.ms === timeoutMs);
        assert.ok(deadline, "the deadline's timer went through the clock seam");
        deadline.fn();
      }
    };
    const run = await timed(() =>
      connect({ ...base, url: server.url, listen: false, timeoutMs, onEvent, deps: { clock } }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "timeout");
    assert.equal(e.reason, "deadline_exceeded");
    assert.deepEqual(
      log.events.slice(fired).filter((x) => x.type === "stage_start"),
      [],
    );
    assert.ok(await eventually(() => server.count("DELETE") === 1, 1_500), "the session was ended (DELETE)");
  });
});

// ---------------------------------------------------------------- C9

describe("C9: a script whose connect() failed exits by itself", { concurrency: 3 }, () => {
  const FIXTURE = fileURLToPath(new URL("../fixtures/deadline/failing-connect.ts", import.meta.url));

  interface Scenario {
    label: string;
    /** Builds the scenario's connect options (and any abort) once its server is up. */
    setup: () => Promise<{ options: ConnectOptions; abortAfterMs?: number; abortOnStageEnd?: string }>;
    code: string;
  }

  const http = (handler: Parameters<typeof loopback>[0], path?: string) => serve(handler, path);
  const scenarios: Scenario[] = [
    {
      label: "a POST that never answers",
      code: "timeout",
      setup: async () => ({
        options: { url: (await http(legacyHttp({ discover: "hang" }))).url, timeoutMs: DEADLINE_MS },
      }),
    },
    {
      label: "an HTTP+SSE stream without an endpoint",
      code: "timeout",
      setup: async () => ({
        options: {
          url: (await http(legacySse({ kind: "silent" }), "/sse")).url,
          transport: "sse",
          timeoutMs: DEADLINE_MS,
        },
      }),
    },
    {
      label: "an HTTP+SSE stream that ends before its endpoint",
      code: "connection",
      setup: async () => ({
        options: {
          url: (await http(legacySse({ kind: "end" }), "/sse")).url,
          transport: "sse",
          timeoutMs: 5_000,
        },
      }),
    },
    {
      label: "a cross-origin endpoint",
      code: "protocol",
      setup: async () => ({
        options: {
          url: (await http(legacySse({ kind: "endpoint", data: "http://other.example/x" }), "/sse")).url,
          transport: "sse",
          timeoutMs: 5_000,
        },
      }),
    },
    {
      label: "a silent initialize (handshake_timeout)",
      code: "timeout",
      setup: async () => ({
        options: {
          url: (await http(legacyHttp({ initialize: "hang-sse" }))).url,
          maxProtocolVersion: "2025-11-25",
          handshakeTimeoutMs: 250,
          timeoutMs: 2_000,
        },
      }),
    },
    {
      label: "every stdio process silent",
      code: "timeout",
      setup: async () => {
        const s = script(SILENT);
        return { options: { command: s.command, args: s.args, probeTimeoutMs: 200, timeoutMs: 800 } };
      },
    },
    {
      label: "a stdio server that ignores SIGTERM",
      code: "timeout",
      setup: async () => {
        const s = script(STUBBORN);
        return { options: { command: s.command, args: s.args, timeoutMs: DEADLINE_MS } };
      },
    },
    {
      label: "the caller cancelling during initialize",
      code: "cancelled",
      setup: async () => ({
        options: {
          url: (await http(legacyHttp({ initialize: "hang-sse" }))).url,
          maxProtocolVersion: "2025-11-25",
          timeoutMs: 10_000,
        },
        abortAfterMs: 300,
      }),
    },
    {
      label: "the caller cancelling as initialize succeeds (HTTP)",
      code: "cancelled",
      setup: async () => ({
        options: { url: (await http(legacyHttp())).url, timeoutMs: 10_000 },
        abortOnStageEnd: "initialize",
      }),
    },
    {
      label: "the caller cancelling as initialize succeeds (stdio)",
      code: "cancelled",
      setup: async () => {
        const s = script(legacyStdio());
        return {
          options: { command: s.command, args: s.args, timeoutMs: 10_000 },
          abortOnStageEnd: "initialize",
        };
      },
    },
  ];

  for (const scenario of scenarios) {
    test(`C9: after ${scenario.label}, the script exits by itself with nothing left running`, async () => {
      const setup = await scenario.setup();
      const run = await runChildToExit({
        file: FIXTURE,
        env: { TETHER_SCENARIO: JSON.stringify(setup) },
        exitWithinMs: 15_000,
      });
      assert.equal(run.code, 0, `exit code; stderr: ${run.stderr}`);
      const line = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
      assert.equal(line.outcome, "rejected", run.stdout);
      assert.equal(line.code, scenario.code, run.stdout);
    });
  }
});
