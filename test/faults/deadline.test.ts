// One establishment deadline (CONTRACT E1–E5, C4, C9) against hostile servers: loopback HTTP
// servers and tiny stdio scripts that stay silent, end streams early, name bad endpoints, ignore
// SIGTERM, or answer just as the caller cancels. Each test checks the outcome (code and reason)
// and the stage it fired in.
//
// Time is the fake clock's (`deps.clock`, test/helpers/fake-clock.ts): a test waits until the
// request it is about reached the server (or the process), then moves time to the limit under
// test, so each limit fires at exactly its value however busy the machine is, and an outcome
// that must come "at once" comes with the clock never moved. Only what no clock drives is real
// time: stopping a child process (its graces), checked against CLEANUP_GRACE_MS plus LOAD_SLACK_MS.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  CLEANUP_GRACE_MS,
  type ConnectOptions,
  connect,
  type LifecycleEvent,
  SIGTERM_GRACE_MS,
  type TetherError,
} from "../../src/index.ts";
import { runChildToExit } from "../helpers/child-exit.ts";
import {
  eventLog,
  eventually,
  fixtureSet,
  isAlive,
  legacyHttp,
  legacySse,
  legacyStdio,
  type loopback,
  modernHttp,
  neverSpawns,
  recordingSpawn,
  SESSION_ID,
  type Settled,
  SILENT,
  SILENT_IGNORES_STDIN_END,
  STUBBORN,
  type StdioScript,
  tetherErrorOf,
  timed,
} from "../helpers/deadline-servers.ts";
import { type FakeClock, fakeClock, until } from "../helpers/fake-clock.ts";

/** The establishment deadline of most tests here, on the fake clock. */
const DEADLINE_MS = 500;
/** Limits a test does not wait out: only a wrong outcome would reach them. */
const LONG_DEADLINE_MS = 10_000;
/**
 * What a loaded machine may add to a real wait (a child process stopped, a socket closed): the
 * bound on hangs, not a measurement; the limits themselves are exact, on the fake clock.
 */
const LOAD_SLACK_MS = 3_000;

// Everything a test opens is closed in `after`, even when an assertion failed first.
const { serve, script, closeAll } = fixtureSet();
after(closeAll);

/** Options every test shares: no process-wide era memory, so earlier tests change nothing. */
const base = { eraHints: false } as const satisfies Partial<ConnectOptions>;

/** A connect() under way: its outcome once settled, whether it has yet, and when (real time). */
interface Pending {
  outcome: Promise<Settled<unknown>>;
  settled(): boolean;
  settledAt(): number;
}

function begin(run: () => Promise<unknown>): Pending {
  let at = 0;
  const outcome = timed(run).then((s) => {
    at = performance.now();
    return s;
  });
  return { outcome, settled: () => at !== 0, settledAt: () => at };
}

/**
 * Moves the fake clock to the timer of `ms` (the limit under test), first checking that the
 * connection is still waiting; then awaits the outcome, which must have come from that timer.
 */
async function fireLimit(clock: FakeClock, ms: number, pending: Pending): Promise<TetherError> {
  const limit = await clock.timer((t) => t.ms === ms && t.setAt <= clock.now());
  assert.equal(pending.settled(), false, `settled before the ${ms} ms limit fired`);
  await clock.advanceTo(limit);
  const e = tetherErrorOf(await pending.outcome);
  assert.equal(clock.now(), limit.at, "it ended when that limit fired, with no other time passing");
  return e;
}

/** The process from `spawned` (or the script's log) that received `method`, once it has. */
async function received(s: StdioScript, pid: () => number | undefined, method: string): Promise<number> {
  await until(
    () => {
      const p = pid();
      return p !== undefined && s.received(p).includes(method);
    },
    LONG_DEADLINE_MS,
    `a server process received ${method}`,
  );
  return pid()!;
}

function assertTimedOut(e: TetherError, reason: string, stages: readonly string[]): void {
  assert.equal(e.code, "timeout", `code (reason ${e.reason}, stage ${e.stage})`);
  assert.equal(e.reason, reason, `reason (stage ${e.stage})`);
  assert.ok(stages.includes(e.stage), `stage ${e.stage} is one of ${stages.join(", ")}`);
  assert.equal(e.phase, "discovery");
}

/** E2: no stage starts once the deadline has expired: on the fake clock, none at or after it. */
function assertNoStageAfterDeadline(events: LifecycleEvent[], deadlineMs: number): void {
  const late = events.filter((e) => e.type === "stage_start" && e.elapsedMs >= deadlineMs);
  assert.deepEqual(late, [], "a stage started after the deadline expired");
}

function assertCancelled(e: TetherError, reason: unknown, stages: readonly string[]): void {
  assert.equal(e.code, "cancelled", `code (reason ${e.reason}, stage ${e.stage})`);
  assert.equal(e.reason, "cancelled");
  assert.equal(e.cancellation, "caller");
  assert.equal(e.cause, reason, "the caller's reason is kept as cause");
  assert.ok(stages.includes(e.stage), `stage ${e.stage} is one of ${stages.join(", ")}`);
}

/** A caller signal to abort once a stage is surely under way, and what started after the abort. */
function canceller(stage: string) {
  const controller = new AbortController();
  const reason = new Error(`the caller gave up during ${stage}`);
  const log = eventLog();
  const startsAfterAbort: LifecycleEvent[] = [];
  let abortedAt = 0;
  const onEvent = (e: LifecycleEvent) => {
    log.onEvent(e);
    if (controller.signal.aborted && e.type === "stage_start") startsAfterAbort.push(e);
  };
  return {
    signal: controller.signal,
    reason,
    onEvent,
    log,
    startsAfterAbort,
    /** Aborts, once the stage has started (so it is the stage that gets cancelled). */
    async abortOnce(ready: () => boolean): Promise<void> {
      await until(
        () => log.events.some((e) => e.type === "stage_start" && e.stage === stage) && ready(),
        LONG_DEADLINE_MS,
        `${stage} under way`,
      );
      abortedAt = performance.now();
      controller.abort(reason);
    },
    abortedAt: () => abortedAt,
  };
}

/**
 * E4 after a cancellation: it settled with the fake clock never moved (no timer was waited
 * out), and in real time within the cleanup grace, give or take a loaded machine.
 */
function assertSettledOnCancel(clock: FakeClock, pending: Pending, abortedAt: number): void {
  assert.deepEqual(clock.fired(), [], "no timer fired: the cancellation alone ended it");
  const ms = pending.settledAt() - abortedAt;
  assert.ok(
    ms < CLEANUP_GRACE_MS + LOAD_SLACK_MS,
    `settled ${Math.round(ms)} ms after the abort; the grace is ${CLEANUP_GRACE_MS} ms`,
  );
}

// ---------------------------------------------------------------- silent HTTP

// Every test opens its own servers and processes and keeps its own fake clock: the groups run side
// by side.
describe("establishment deadlines", { concurrency: true }, () => {
  describe("E1: a silent HTTP server", () => {
    test("E1: a POST that never sends headers fails with deadline_exceeded when the deadline ends", async () => {
      const server = await serve(legacyHttp({ discover: "hang", initialize: "hang" }));
      const clock = fakeClock();
      const log = eventLog();
      const pending = begin(() =>
        connect({ ...base, url: server.url, timeoutMs: DEADLINE_MS, onEvent: log.onEvent, deps: { clock } }),
      );
      await until(() => server.count("server/discover") === 1, LONG_DEADLINE_MS, "the probe arrived");
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["http_request", "probe"]);
      assert.equal(e.cancellation, "deadline");
      assertNoStageAfterDeadline(log.events, DEADLINE_MS);
      assert.equal(server.count("initialize"), 0, "E2: nothing was sent after the deadline");
      assert.ok(
        await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
        "E4: the request in flight was aborted",
      );
    });

    test("E1: with the probe skipped (ceiling 2025-11-25), a silent initialize POST fails with deadline_exceeded", async () => {
      const server = await serve(legacyHttp({ initialize: "hang" }));
      const clock = fakeClock();
      const log = eventLog();
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          maxProtocolVersion: "2025-11-25",
          timeoutMs: DEADLINE_MS,
          onEvent: log.onEvent,
          deps: { clock },
        }),
      );
      await until(() => server.count("initialize") === 1, LONG_DEADLINE_MS, "initialize arrived");
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["http_request", "initialize"]);
      assert.equal(server.count("server/discover"), 0, "N4: a ceiling below 2026-07-28 skips the probe");
      assertNoStageAfterDeadline(log.events, DEADLINE_MS);
      assert.ok(
        await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
        "E4: the request in flight was aborted",
      );
    });

    test("E1: the deadline covers tool listing (prefetchTools): a silent tools/list ends with deadline_exceeded", async () => {
      const server = await serve(legacyHttp({ toolsList: "hang-sse" }));
      const clock = fakeClock();
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          listen: false,
          prefetchTools: true,
          timeoutMs: DEADLINE_MS,
          deps: { clock },
        }),
      );
      await until(() => server.count("tools/list") === 1, LONG_DEADLINE_MS, "tools/list arrived");
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["list_tools"]);
      assert.equal(e.cancellation, "deadline", "the deadline, not the caller, ended it");
      assert.ok(
        await eventually(() => server.count("DELETE") === 1, LOAD_SLACK_MS),
        "the session was ended (DELETE)",
      );
    });
  });

  // ---------------------------------------------------------------- HTTP+SSE endpoint

  describe("E1/E5: the HTTP+SSE endpoint event", () => {
    for (const [name, kind] of [
      ["E1: a GET that never sends headers fails in sse_endpoint with deadline_exceeded", "no-headers"],
      [
        "E1: a stream that never sends its endpoint event fails in sse_endpoint with deadline_exceeded",
        "silent",
      ],
    ] as const) {
      test(name, async () => {
        const server = await serve(legacySse({ kind }), "/sse");
        const clock = fakeClock();
        const log = eventLog();
        const pending = begin(() =>
          connect({
            ...base,
            url: server.url,
            transport: "sse",
            timeoutMs: DEADLINE_MS,
            onEvent: log.onEvent,
            deps: { clock },
          }),
        );
        await until(() => server.count("GET") === 1, LONG_DEADLINE_MS, "the GET arrived");
        const e = await fireLimit(clock, DEADLINE_MS, pending);
        assertTimedOut(e, "deadline_exceeded", ["sse_endpoint"]);
        assertNoStageAfterDeadline(log.events, DEADLINE_MS);
        assert.ok(
          await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
          "E4: the event stream in flight was closed",
        );
      });
    }

    test("E5: a stream that ends before its endpoint event fails at once with a connection error", async () => {
      const server = await serve(legacySse({ kind: "end" }), "/sse");
      const clock = fakeClock();
      const run = await timed(() =>
        connect({ ...base, url: server.url, transport: "sse", timeoutMs: LONG_DEADLINE_MS, deps: { clock } }),
      );
      const e = tetherErrorOf(run);
      assert.equal(e.code, "connection", `code (reason ${e.reason})`);
      assert.equal(e.stage, "sse_endpoint");
      assert.deepEqual(
        clock.fired(),
        [],
        "at once: it failed with the clock never moved, no timer waited out",
      );
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
        const clock = fakeClock();
        const run = await timed(() =>
          connect({
            ...base,
            url: server.url,
            transport: "sse",
            timeoutMs: LONG_DEADLINE_MS,
            deps: { clock },
          }),
        );
        const e = tetherErrorOf(run);
        assert.equal(e.code, "protocol", `code (reason ${e.reason})`);
        assert.equal(e.stage, "sse_endpoint");
        assert.deepEqual(
          clock.fired(),
          [],
          "at once: it failed with the clock never moved, no timer waited out",
        );
        assert.equal(
          server.requests.filter((r) => r.method === "POST").length,
          0,
          "nothing was POSTed anywhere",
        );
        assert.ok(
          await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
          "the event stream was closed",
        );
      });
    }
  });

  // ---------------------------------------------------------------- handshake

  describe("E3: initialize never answered", () => {
    test("E3: a handshake limit below the deadline ends a silent initialize with handshake_timeout", async () => {
      const server = await serve(legacyHttp({ initialize: "hang-sse" }));
      const clock = fakeClock();
      const log = eventLog();
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          maxProtocolVersion: "2025-11-25",
          handshakeTimeoutMs: 250,
          timeoutMs: 2_000,
          onEvent: log.onEvent,
          deps: { clock },
        }),
      );
      await until(() => server.count("initialize") === 1, LONG_DEADLINE_MS, "initialize arrived");
      const e = await fireLimit(clock, 250, pending);
      assertTimedOut(e, "handshake_timeout", ["initialize"]);
      assert.equal(
        log.events.filter((x) => x.type === "attempt_start").length,
        1,
        "R1: one attempt, no recovery",
      );
      assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
    });

    test("E3: a handshake limit above the deadline leaves the deadline to fire: deadline_exceeded", async () => {
      const server = await serve(legacyHttp({ initialize: "hang-sse" }));
      const clock = fakeClock();
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          maxProtocolVersion: "2025-11-25",
          handshakeTimeoutMs: 5_000,
          timeoutMs: DEADLINE_MS,
          deps: { clock },
        }),
      );
      await until(() => server.count("initialize") === 1, LONG_DEADLINE_MS, "initialize arrived");
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["initialize"]);
    });

    test("E3: after a probe answered -32601, a silent initialize ends with handshake_timeout", async () => {
      const server = await serve(legacyHttp({ discover: "rpc-32601", initialize: "hang" }));
      const clock = fakeClock();
      const log = eventLog();
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          handshakeTimeoutMs: 250,
          timeoutMs: 2_000,
          onEvent: log.onEvent,
          deps: { clock },
        }),
      );
      await until(() => server.count("initialize") === 1, LONG_DEADLINE_MS, "initialize arrived");
      const e = await fireLimit(clock, 250, pending);
      assertTimedOut(e, "handshake_timeout", ["initialize"]);
      assert.deepEqual(
        server.requests.map((r) => r.rpcMethod),
        ["server/discover", "initialize"],
        "probe, then initialize, then nothing",
      );
      assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
    });

    test("E3: a stdio server that refuses the probe and never answers initialize: handshake_timeout, process gone", async () => {
      const s = script(legacyStdio({ probe: "rpc-32601", initialize: "silent" }));
      const clock = fakeClock();
      const pending = begin(() =>
        connect({
          ...base,
          command: s.command,
          args: s.args,
          handshakeTimeoutMs: 250,
          timeoutMs: 2_000,
          deps: { clock },
        }),
      );
      const pid = await received(s, () => s.pids()[0], "initialize");
      const e = await fireLimit(clock, 250, pending);
      assertTimedOut(e, "handshake_timeout", ["initialize"]);
      assert.equal(s.pids().length, 1, "one process: a refused probe leaves the channel usable");
      assert.deepEqual(s.received(pid), ["server/discover", "initialize"]);
      assert.equal(isAlive(pid), false, "the process is gone once connect() settled");
    });
  });

  // ---------------------------------------------------------------- silent stdio

  describe("E1/E4: silent and stubborn stdio servers", () => {
    test("N6/E1: a silent probe gives way to a fresh process; with every process silent the deadline ends it", async () => {
      const s = script(SILENT);
      const clock = fakeClock();
      const log = eventLog();
      const spawned = recordingSpawn();
      const pending = begin(() =>
        connect({
          ...base,
          command: s.command,
          args: s.args,
          probeTimeoutMs: 200,
          timeoutMs: DEADLINE_MS,
          onEvent: log.onEvent,
          deps: { spawn: spawned.spawn, clock },
        }),
      );
      const probed = await received(s, () => spawned.pids[0], "server/discover");
      await clock.advanceTo(await clock.timer((t) => t.ms === 200));
      const fresh = await received(s, () => spawned.pids[1], "initialize");
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["initialize"]);
      assert.equal(spawned.pids.length, 2, "a fresh process after the silent probe");
      assert.deepEqual(
        s.received(probed),
        ["server/discover"],
        "N6: initialize never went to the probed process",
      );
      assert.deepEqual(s.received(fresh), ["initialize"], "the fresh process was not probed again");
      for (const pid of spawned.pids) assert.equal(isAlive(pid), false, `process ${pid} is gone`);
      assertNoStageAfterDeadline(log.events, DEADLINE_MS);
    });

    test("E4: a stdio server that ignores SIGTERM and its stdin's end is killed within the grace", async () => {
      const s = script(STUBBORN);
      const clock = fakeClock();
      const log = eventLog();
      const pending = begin(() =>
        connect({
          ...base,
          command: s.command,
          args: s.args,
          timeoutMs: DEADLINE_MS,
          onEvent: log.onEvent,
          deps: { clock },
        }),
      );
      // Once it logged the probe, its SIGTERM handler (installed before it reads) is in place.
      const pid = await received(s, () => s.pids()[0], "server/discover");
      const firedAt = performance.now();
      const e = await fireLimit(clock, DEADLINE_MS, pending);
      assertTimedOut(e, "deadline_exceeded", ["probe"]);
      const stoppingMs = pending.settledAt() - firedAt;
      assert.ok(
        stoppingMs >= 0.8 * SIGTERM_GRACE_MS,
        `settled ${Math.round(stoppingMs)} ms after the deadline: too soon to have given SIGTERM its grace`,
      );
      assert.ok(
        stoppingMs <= CLEANUP_GRACE_MS + LOAD_SLACK_MS,
        `settled ${Math.round(stoppingMs)} ms after the deadline; the grace is ${CLEANUP_GRACE_MS} ms`,
      );
      assert.equal(s.pids().length, 1);
      assert.equal(isAlive(pid), false, "the stubborn process is gone once connect() settled");
      assert.ok(
        s.log().some((l) => (l.event as string) === "sigterm"),
        "it was asked to stop (SIGTERM) before it was killed",
      );
      assertNoStageAfterDeadline(log.events, DEADLINE_MS);
    });

    test("E2: when the deadline passes while a silent probe's process is being stopped, no fresh process starts", async () => {
      // The probe gives up at 200 ms; the process ignores its stdin's end, so stopping it takes the
      // real grace before SIGTERM. The deadline passes (at 450 ms) while that is under way.
      const s = script(SILENT_IGNORES_STDIN_END);
      const deadline = 450;
      const clock = fakeClock();
      const log = eventLog();
      const spawned = recordingSpawn();
      const pending = begin(() =>
        connect({
          ...base,
          command: s.command,
          args: s.args,
          probeTimeoutMs: 200,
          timeoutMs: deadline,
          onEvent: log.onEvent,
          deps: { spawn: spawned.spawn, clock },
        }),
      );
      await received(s, () => spawned.pids[0], "server/discover");
      await clock.advanceTo(await clock.timer((t) => t.ms === 200));
      await until(
        () => log.events.some((x) => x.type === "stage_end" && x.stage === "probe"),
        LONG_DEADLINE_MS,
        "the probe ended",
      );
      const e = await fireLimit(clock, deadline, pending);
      assert.equal(e.code, "timeout", `code (reason ${e.reason}, stage ${e.stage})`);
      assert.equal(e.reason, "deadline_exceeded");
      assertNoStageAfterDeadline(log.events, deadline);
      assert.equal(spawned.pids.length, 1, "no fresh process was spawned after the deadline");
      for (const pid of spawned.pids) assert.equal(isAlive(pid), false, `process ${pid} is gone`);
    });
  });

  // ---------------------------------------------------------------- caller cancellation

  describe("E3: caller cancellation at each stage", () => {
    test("E3: cancelling during spawn rejects with cancelled, the caller's reason as cause", async () => {
      const fake = neverSpawns();
      const clock = fakeClock();
      const c = canceller("spawn");
      const pending = begin(() =>
        connect({
          ...base,
          command: "never-started",
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: { spawn: fake.spawn, clock },
        }),
      );
      await c.abortOnce(() => fake.calls() === 1);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, ["spawn"]);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      assert.equal(fake.calls(), 1);
      assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
    });

    test("E3: cancelling during a stdio probe rejects with cancelled and stops the process", async () => {
      const s = script(SILENT);
      const clock = fakeClock();
      const c = canceller("probe");
      const spawned = recordingSpawn();
      const pending = begin(() =>
        connect({
          ...base,
          command: s.command,
          args: s.args,
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: { spawn: spawned.spawn, clock },
        }),
      );
      await c.abortOnce(() => spawned.pids[0] !== undefined && s.received(spawned.pids[0]).length > 0);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, ["probe"]);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      assert.equal(spawned.pids.length, 1, "no fresh process after a cancelled probe");
      assert.equal(isAlive(spawned.pids[0]!), false, "the process is gone");
      assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
    });

    test("E3: cancelling during an HTTP request that never answers rejects with cancelled and aborts the request", async () => {
      const server = await serve(legacyHttp({ discover: "hang" }));
      const clock = fakeClock();
      const c = canceller("probe");
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: { clock },
        }),
      );
      await c.abortOnce(() => server.count("server/discover") === 1);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, ["http_request", "probe"]);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      assert.ok(
        await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
        "the request in flight was aborted",
      );
      assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");
    });

    test("E3: cancelling while waiting for the HTTP+SSE endpoint rejects with cancelled and closes the stream", async () => {
      const server = await serve(legacySse({ kind: "silent" }), "/sse");
      const clock = fakeClock();
      const c = canceller("sse_endpoint");
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          transport: "sse",
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: { clock },
        }),
      );
      await c.abortOnce(() => server.count("GET") === 1);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, ["sse_endpoint"]);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      assert.ok(
        await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
        "the event stream was closed",
      );
    });

    test("E3: cancelling during initialize rejects with cancelled and sends nothing more", async () => {
      const server = await serve(legacyHttp({ initialize: "hang-sse" }));
      const clock = fakeClock();
      const c = canceller("initialize");
      const pending = begin(() =>
        connect({
          ...base,
          url: server.url,
          maxProtocolVersion: "2025-11-25",
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: { clock },
        }),
      );
      await c.abortOnce(() => server.count("initialize") === 1);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, ["initialize"]);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      assert.ok(
        await eventually(() => server.openRequests() === 0, LOAD_SLACK_MS),
        "the reply stream was closed",
      );
      assert.deepEqual(
        server.requests.map((r) => r.rpcMethod ?? r.method),
        ["initialize"],
        "nothing was sent after the cancellation",
      );
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
      assert.ok(
        await eventually(() => server.count("DELETE") >= 1, 1_500),
        "the session we opened was ended",
      );
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
      assert.ok(
        await eventually(() => server.count("DELETE") >= 1, 1_500),
        "the client was disposed (DELETE)",
      );
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
      assert.ok(
        await eventually(() => server.count("DELETE") === 1, 1_500),
        "the session was ended (DELETE)",
      );
    });
  });

  // ---------------------------------------------------------------- C9

  describe("C9: a script whose connect() failed exits by itself", { concurrency: 5 }, () => {
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
});
