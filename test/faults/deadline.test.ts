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
  type ConnectSettings,
  connect,
  type HttpTarget,
  type LifecycleEvent,
  SIGTERM_GRACE_MS,
  type TetherError,
} from "../../src/index.ts";
import { runChildToExit } from "../helpers/child-exit.ts";
import {
  eventLog,
  eventually,
  fixtureSet,
  type Handler,
  isAlive,
  type Loopback,
  legacyHttp,
  legacySse,
  legacyStdio,
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

/** Asserts that `check` comes to hold within `withinMs` of real time. */
async function assertEventually(check: () => boolean, withinMs: number, message: string): Promise<void> {
  assert.ok(await eventually(check, withinMs), message);
}

/** What a request, the event stream or a reply stream in flight must come to: closed. */
async function assertNothingOpen(server: Loopback, message: string): Promise<void> {
  await assertEventually(() => server.openRequests() === 0, LOAD_SLACK_MS, message);
}

/** The wait messages of `until`: what arriving at the server means for each request. */
function arrivedMessage(what: string): string {
  if (what === "server/discover") return "the probe arrived";
  if (what === "GET") return "the GET arrived";
  return `${what} arrived`;
}

/** A connect() begun on its own fake clock (the establishment deadline DEADLINE_MS unless given), its events logged. */
function launch(options: ConnectOptions, spawn?: ReturnType<typeof recordingSpawn>["spawn"]) {
  const clock = fakeClock();
  const log = eventLog();
  const pending = begin(() =>
    connect({
      ...base,
      timeoutMs: DEADLINE_MS,
      ...options,
      onEvent: log.onEvent,
      deps: spawn ? { spawn, clock } : { clock },
    }),
  );
  return { clock, log, pending };
}

/**
 * One limit against a scripted HTTP server: the server waits silent at `arrives` (the JSON-RPC or
 * HTTP method that must have reached it), the limit of `limitMs` fires, and the connection
 * fails with `reason` in one of `stages`; `then` checks the rest.
 */
interface HttpLimitCase {
  name: string;
  handler: Handler;
  path?: string;
  options: Omit<HttpTarget, "url"> & ConnectSettings;
  arrives: string;
  limitMs: number;
  reason: string;
  stages: readonly string[];
  check(server: Loopback, e: TetherError, log: ReturnType<typeof eventLog>): Promise<void> | void;
}

function httpLimitTests(cases: readonly HttpLimitCase[]): void {
  for (const c of cases) {
    test(c.name, async () => {
      const server = await serve(c.handler, c.path);
      const { clock, log, pending } = launch({ url: server.url, ...c.options });
      await until(() => server.count(c.arrives) === 1, LONG_DEADLINE_MS, arrivedMessage(c.arrives));
      const e = await fireLimit(clock, c.limitMs, pending);
      assertTimedOut(e, c.reason, c.stages);
      await c.check(server, e, log);
    });
  }
}

/** A connect() on an HTTP+SSE server that must fail at once, the fake clock never moved. */
async function failsAtOnce(server: Loopback): Promise<TetherError> {
  const clock = fakeClock();
  const run = await timed(() =>
    connect({ ...base, url: server.url, transport: "sse", timeoutMs: LONG_DEADLINE_MS, deps: { clock } }),
  );
  const e = tetherErrorOf(run);
  assert.deepEqual(clock.fired(), [], "at once: it failed with the clock never moved, no timer waited out");
  return e;
}

/**
 * The caller cancelling during `stage`: connect() begins with `options` (on a fake clock it never
 * moves), the caller aborts once the stage is under way and `ready` holds, and it must reject
 * with cancelled in one of `stages`, settled within the cleanup grace; `then` checks the rest.
 */
interface CancelCase {
  name: string;
  stage: string;
  open(): Promise<{
    options: ConnectOptions;
    ready: () => boolean;
    spawn?: ReturnType<typeof recordingSpawn>["spawn"];
    check(c: ReturnType<typeof canceller>): Promise<void> | void;
  }>;
  stages: readonly string[];
}

function cancelTests(cases: readonly CancelCase[]): void {
  for (const k of cases) {
    test(k.name, async () => {
      const { options, ready, spawn, check } = await k.open();
      const clock = fakeClock();
      const c = canceller(k.stage);
      const pending = begin(() =>
        connect({
          ...base,
          ...options,
          signal: c.signal,
          onEvent: c.onEvent,
          timeoutMs: LONG_DEADLINE_MS,
          deps: spawn ? { spawn, clock } : { clock },
        }),
      );
      await c.abortOnce(ready);
      const e = tetherErrorOf(await pending.outcome);
      assertCancelled(e, c.reason, k.stages);
      assertSettledOnCancel(clock, pending, c.abortedAt());
      await check(c);
    });
  }
}

// ---------------------------------------------------------------- silent HTTP

// Every test opens its own servers and processes and keeps its own fake clock: the groups run side
// by side.
describe("establishment deadlines", { concurrency: true }, () => {
  describe("E1: a silent HTTP server", () => {
    httpLimitTests([
      {
        name: "E1: a POST that never sends headers fails with deadline_exceeded when the deadline ends",
        handler: legacyHttp({ discover: "hang", initialize: "hang" }),
        options: {},
        arrives: "server/discover",
        limitMs: DEADLINE_MS,
        reason: "deadline_exceeded",
        stages: ["http_request", "probe"],
        async check(server, e, log) {
          assert.equal(e.cancellation, "deadline");
          assertNoStageAfterDeadline(log.events, DEADLINE_MS);
          assert.equal(server.count("initialize"), 0, "E2: nothing was sent after the deadline");
          await assertNothingOpen(server, "E4: the request in flight was aborted");
        },
      },
      {
        name: "E1: with the probe skipped (ceiling 2025-11-25), a silent initialize POST fails with deadline_exceeded",
        handler: legacyHttp({ initialize: "hang" }),
        options: { maxProtocolVersion: "2025-11-25" },
        arrives: "initialize",
        limitMs: DEADLINE_MS,
        reason: "deadline_exceeded",
        stages: ["http_request", "initialize"],
        async check(server, _e, log) {
          assert.equal(server.count("server/discover"), 0, "N4: a ceiling below 2026-07-28 skips the probe");
          assertNoStageAfterDeadline(log.events, DEADLINE_MS);
          await assertNothingOpen(server, "E4: the request in flight was aborted");
        },
      },
      {
        name: "E1: the deadline covers tool listing (prefetchTools): a silent tools/list ends with deadline_exceeded",
        handler: legacyHttp({ toolsList: "hang-sse" }),
        options: { listen: false, prefetchTools: true },
        arrives: "tools/list",
        limitMs: DEADLINE_MS,
        reason: "deadline_exceeded",
        stages: ["list_tools"],
        async check(server, e) {
          assert.equal(e.cancellation, "deadline", "the deadline, not the caller, ended it");
          await assertEventually(
            () => server.count("DELETE") === 1,
            LOAD_SLACK_MS,
            "the session was ended (DELETE)",
          );
        },
      },
    ]);
  });

  // ---------------------------------------------------------------- HTTP+SSE endpoint

  describe("E1/E5: the HTTP+SSE endpoint event", () => {
    httpLimitTests(
      (
        [
          ["E1: a GET that never sends headers fails in sse_endpoint with deadline_exceeded", "no-headers"],
          [
            "E1: a stream that never sends its endpoint event fails in sse_endpoint with deadline_exceeded",
            "silent",
          ],
        ] as const
      ).map(
        ([name, kind]): HttpLimitCase => ({
          name,
          handler: legacySse({ kind }),
          path: "/sse",
          options: { transport: "sse" },
          arrives: "GET",
          limitMs: DEADLINE_MS,
          reason: "deadline_exceeded",
          stages: ["sse_endpoint"],
          async check(server, _e, log) {
            assertNoStageAfterDeadline(log.events, DEADLINE_MS);
            await assertNothingOpen(server, "E4: the event stream in flight was closed");
          },
        }),
      ),
    );

    test("E5: a stream that ends before its endpoint event fails at once with a connection error", async () => {
      const e = await failsAtOnce(await serve(legacySse({ kind: "end" }), "/sse"));
      assert.equal(e.code, "connection", `code (reason ${e.reason})`);
      assert.equal(e.stage, "sse_endpoint");
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
        const e = await failsAtOnce(server);
        assert.equal(e.code, "protocol", `code (reason ${e.reason})`);
        assert.equal(e.stage, "sse_endpoint");
        assert.equal(
          server.requests.filter((r) => r.method === "POST").length,
          0,
          "nothing was POSTed anywhere",
        );
        await assertNothingOpen(server, "the event stream was closed");
      });
    }
  });

  // ---------------------------------------------------------------- handshake

  describe("E3: initialize never answered", () => {
    httpLimitTests([
      {
        name: "E3: a handshake limit below the deadline ends a silent initialize with handshake_timeout",
        handler: legacyHttp({ initialize: "hang-sse" }),
        options: { maxProtocolVersion: "2025-11-25", handshakeTimeoutMs: 250, timeoutMs: 2_000 },
        arrives: "initialize",
        limitMs: 250,
        reason: "handshake_timeout",
        stages: ["initialize"],
        check(_server, _e, log) {
          assert.equal(
            log.events.filter((x) => x.type === "attempt_start").length,
            1,
            "R1: one attempt, no recovery",
          );
          assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
        },
      },
      {
        name: "E3: a handshake limit above the deadline leaves the deadline to fire: deadline_exceeded",
        handler: legacyHttp({ initialize: "hang-sse" }),
        options: { maxProtocolVersion: "2025-11-25", handshakeTimeoutMs: 5_000 },
        arrives: "initialize",
        limitMs: DEADLINE_MS,
        reason: "deadline_exceeded",
        stages: ["initialize"],
        check() {},
      },
      {
        name: "E3: after a probe answered -32601, a silent initialize ends with handshake_timeout",
        handler: legacyHttp({ discover: "rpc-32601", initialize: "hang" }),
        options: { handshakeTimeoutMs: 250, timeoutMs: 2_000 },
        arrives: "initialize",
        limitMs: 250,
        reason: "handshake_timeout",
        stages: ["initialize"],
        check(server, _e, log) {
          assert.deepEqual(
            server.requests.map((r) => r.rpcMethod),
            ["server/discover", "initialize"],
            "probe, then initialize, then nothing",
          );
          assert.deepEqual(log.events.at(-1)?.type, "attempt_end", "nothing after the failed attempt");
        },
      },
    ]);

    test("E3: a stdio server that refuses the probe and never answers initialize: handshake_timeout, process gone", async () => {
      const s = script(legacyStdio({ probe: "rpc-32601", initialize: "silent" }));
      const { clock, pending } = launch({
        command: s.command,
        args: s.args,
        handshakeTimeoutMs: 250,
        timeoutMs: 2_000,
      });
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
      const spawned = recordingSpawn();
      const { clock, log, pending } = launch(
        { command: s.command, args: s.args, probeTimeoutMs: 200 },
        spawned.spawn,
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
      const { clock, log, pending } = launch({ command: s.command, args: s.args });
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
      const spawned = recordingSpawn();
      const { clock, log, pending } = launch(
        { command: s.command, args: s.args, probeTimeoutMs: 200, timeoutMs: deadline },
        spawned.spawn,
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
    const noStageAfterAbort = (c: ReturnType<typeof canceller>) =>
      assert.deepEqual(c.startsAfterAbort, [], "E2: no stage started after the caller cancelled");

    cancelTests([
      {
        name: "E3: cancelling during spawn rejects with cancelled, the caller's reason as cause",
        stage: "spawn",
        stages: ["spawn"],
        async open() {
          const fake = neverSpawns();
          return {
            options: { command: "never-started" },
            spawn: fake.spawn,
            ready: () => fake.calls() === 1,
            check(c) {
              assert.equal(fake.calls(), 1);
              noStageAfterAbort(c);
            },
          };
        },
      },
      {
        name: "E3: cancelling during a stdio probe rejects with cancelled and stops the process",
        stage: "probe",
        stages: ["probe"],
        async open() {
          const s = script(SILENT);
          const spawned = recordingSpawn();
          return {
            options: { command: s.command, args: s.args },
            spawn: spawned.spawn,
            ready: () => spawned.pids[0] !== undefined && s.received(spawned.pids[0]).length > 0,
            check(c) {
              assert.equal(spawned.pids.length, 1, "no fresh process after a cancelled probe");
              assert.equal(isAlive(spawned.pids[0]!), false, "the process is gone");
              noStageAfterAbort(c);
            },
          };
        },
      },
      {
        name: "E3: cancelling during an HTTP request that never answers rejects with cancelled and aborts the request",
        stage: "probe",
        stages: ["http_request", "probe"],
        async open() {
          const server = await serve(legacyHttp({ discover: "hang" }));
          return {
            options: { url: server.url },
            ready: () => server.count("server/discover") === 1,
            async check(c) {
              await assertNothingOpen(server, "the request in flight was aborted");
              noStageAfterAbort(c);
            },
          };
        },
      },
      {
        name: "E3: cancelling while waiting for the HTTP+SSE endpoint rejects with cancelled and closes the stream",
        stage: "sse_endpoint",
        stages: ["sse_endpoint"],
        async open() {
          const server = await serve(legacySse({ kind: "silent" }), "/sse");
          return {
            options: { url: server.url, transport: "sse" },
            ready: () => server.count("GET") === 1,
            check: () => assertNothingOpen(server, "the event stream was closed"),
          };
        },
      },
      {
        name: "E3: cancelling during initialize rejects with cancelled and sends nothing more",
        stage: "initialize",
        stages: ["initialize"],
        async open() {
          const server = await serve(legacyHttp({ initialize: "hang-sse" }));
          return {
            options: { url: server.url, maxProtocolVersion: "2025-11-25" },
            ready: () => server.count("initialize") === 1,
            async check() {
              await assertNothingOpen(server, "the reply stream was closed");
              assert.deepEqual(
                server.requests.map((r) => r.rpcMethod ?? r.method),
                ["initialize"],
                "nothing was sent after the cancellation",
              );
            },
          };
        },
      },
    ]);

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

    /** connect() with `options`, the caller cancelling as `stage` succeeds: the error, and what was seen. */
    async function cancelledAsSucceeds(stage: string, options: ConnectOptions) {
      const c = abortOnSuccessOf(stage);
      const run = await timed(() =>
        connect({ ...base, ...options, signal: c.signal, onEvent: c.onEvent, timeoutMs: 10_000 }),
      );
      return { e: tetherErrorOf(run), c };
    }

    /** The session was ended: `check` on the DELETEs comes to hold. */
    const assertEnded = (check: () => boolean, message: string) => assertEventually(check, 1_500, message);

    test("C4: cancelling as initialize succeeds (legacy HTTP) rejects, ends the session with one DELETE, starts nothing", async () => {
      const server = await serve(legacyHttp());
      const { e, c } = await cancelledAsSucceeds("initialize", { url: server.url, listen: false });
      assertCancelled(e, c.reason, ["initialize", "initialized"]);
      assert.deepEqual(c.startsAfterAbort(), [], "C4: no later stage starts");
      assert.equal(server.count("notifications/initialized"), 0, "notifications/initialized was not sent");
      await assertEnded(() => server.count("DELETE") >= 1, "the session we opened was ended");
      const deletes = server.requests.filter((r) => r.method === "DELETE");
      assert.equal(deletes.length, 1, "exactly one DELETE");
      assert.equal(deletes[0]!.headers["mcp-session-id"], SESSION_ID);
    });

    test("C4: cancelling as the last establishment stage succeeds rejects, disposes the client, reports that stage", async () => {
      const server = await serve(legacyHttp());
      const { e, c } = await cancelledAsSucceeds("initialized", { url: server.url, listen: false });
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
      await assertEnded(() => server.count("DELETE") >= 1, "the client was disposed (DELETE)");
      assert.equal(server.count("DELETE"), 1);
    });

    test("C4: cancelling as initialized succeeds with prefetchTools rejects and never lists tools", async () => {
      const server = await serve(legacyHttp());
      const { e, c } = await cancelledAsSucceeds("initialized", {
        url: server.url,
        listen: false,
        prefetchTools: true,
      });
      assert.equal(e.code, "cancelled");
      assert.equal(e.cause, c.reason);
      assert.equal(server.count("tools/list"), 0, "tools/list was not sent after the cancellation");
      await assertEnded(() => server.count("DELETE") === 1, "the client was disposed (DELETE)");
    });

    test("C4: cancelling as initialize succeeds (stdio) rejects and the process is gone", async () => {
      const s = script(legacyStdio());
      const { e, c } = await cancelledAsSucceeds("initialize", { command: s.command, args: s.args });
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
      const { e, c } = await cancelledAsSucceeds("probe", { url: server.url });
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
      await assertEnded(() => server.count("DELETE") === 1, "the session was ended (DELETE)");
    });
  });

  // ---------------------------------------------------------------- C9

  describe("C9: a script whose connect() failed exits by itself", { concurrency: 5 }, () => {
    const FIXTURE = fileURLToPath(new URL("../fixtures/deadline/failing-connect.ts", import.meta.url));

    interface Scenario {
      label: string;
      code: string;
      /** Builds the scenario's connect options (and any abort) once its server is up. */
      setup: () => Promise<{ options: ConnectOptions; abortAfterMs?: number; abortOnStageEnd?: string }>;
    }

    /** The URL of a fresh scripted HTTP server, and how to run a fresh stdio script. */
    const urlOf = async (handler: Handler, path?: string) => (await serve(handler, path)).url;
    const run = (source: string) => {
      const s = script(source);
      return { command: s.command, args: s.args };
    };
    const sse = (opening: Parameters<typeof legacySse>[0]) => urlOf(legacySse(opening), "/sse");
    /** A legacy server whose initialize never answers, the probe skipped. */
    const silentInitialize = async () => ({
      url: await urlOf(legacyHttp({ initialize: "hang-sse" })),
      maxProtocolVersion: "2025-11-25" as const,
    });
    const scenario = (label: string, code: string, setup: Scenario["setup"]): Scenario => ({
      label,
      code,
      setup,
    });
    const scenarios: Scenario[] = [
      scenario("a POST that never answers", "timeout", async () => ({
        options: { url: await urlOf(legacyHttp({ discover: "hang" })), timeoutMs: DEADLINE_MS },
      })),
      scenario("an HTTP+SSE stream without an endpoint", "timeout", async () => ({
        options: { url: await sse({ kind: "silent" }), transport: "sse", timeoutMs: DEADLINE_MS },
      })),
      scenario("an HTTP+SSE stream that ends before its endpoint", "connection", async () => ({
        options: { url: await sse({ kind: "end" }), transport: "sse", timeoutMs: 5_000 },
      })),
      scenario("a cross-origin endpoint", "protocol", async () => ({
        options: {
          url: await sse({ kind: "endpoint", data: "http://other.example/x" }),
          transport: "sse",
          timeoutMs: 5_000,
        },
      })),
      scenario("a silent initialize (handshake_timeout)", "timeout", async () => ({
        options: { ...(await silentInitialize()), handshakeTimeoutMs: 250, timeoutMs: 2_000 },
      })),
      scenario("every stdio process silent", "timeout", async () => ({
        options: { ...run(SILENT), probeTimeoutMs: 200, timeoutMs: 800 },
      })),
      scenario("a stdio server that ignores SIGTERM", "timeout", async () => ({
        options: { ...run(STUBBORN), timeoutMs: DEADLINE_MS },
      })),
      scenario("the caller cancelling during initialize", "cancelled", async () => ({
        options: { ...(await silentInitialize()), timeoutMs: 10_000 },
        abortAfterMs: 300,
      })),
      scenario("the caller cancelling as initialize succeeds (HTTP)", "cancelled", async () => ({
        options: { url: await urlOf(legacyHttp()), timeoutMs: 10_000 },
        abortOnStageEnd: "initialize",
      })),
      scenario("the caller cancelling as initialize succeeds (stdio)", "cancelled", async () => ({
        options: { ...run(legacyStdio()), timeoutMs: 10_000 },
        abortOnStageEnd: "initialize",
      })),
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
