// Phase budgets and ceilings (CONTRACT P1, P3, P4, P6, P7, P8) against scripted servers: each
// phase held to its own time and byte budget (opposite overrides fail in opposite phases), an
// established session that outlives the discovery deadline, caller abort apart from timeout, a
// timed-out call never re-sent, progress that restarts a call's clock up to its hard maximum,
// the tool-listing ceilings, and the unsolicited-frame ceiling on a shared stream.
//
// Time is a fake clock (`deps.clock`) wherever a budget is the point: slow servers hold their
// replies until the test releases them, the test moves the clock once the request reached the
// server, and each budget fires at exactly its value, on any machine. Elsewhere a reply decides
// the outcome and no budget is waited out.

import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { after, describe, test } from "node:test";
import { type CallOptions, type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { type SseAnswer, scriptedLegacySse, stdioServer } from "../fixtures/budgets/servers.ts";
import { type FakeClock, fakeClock, until } from "../helpers/fake-clock.ts";
import {
  destroy,
  type Handler,
  type HostileServer,
  hang,
  hostileSet,
  json,
  legacyStreamableHandler,
  type Overrides,
  openSse,
  type Recorded,
  rpcResult,
  writeSse,
} from "../helpers/hostile.ts";

/** Every connection: no remembered era (tests stay independent) and no optional GET stream. */
const base = { eraHints: false, listen: false } as const satisfies Partial<ConnectOptions>;

/** A short discovery budget (fake clock): the P1 tests run it out, the P3 tests outlive it. */
const SHORT_DISCOVERY_MS = 300;
const CALL_TIMEOUT_MS = 300;
/** Real time a test waits for an event (a request reaching the server) before calling it hung. */
const STUCK_MS = 20_000;
/** A reply big enough to pass a small ceiling many times over. */
const BIG_TOOL_COUNT = 40;
const SMALL_CEILING = 8 * 1024;

// ---------------------------------------------------------------- bookkeeping

const kept = hostileSet();
after(kept.closeAll);
const http = (handler: Handler, path?: string) => kept.http(handler, path ? { path } : {});
const sseServer = async (answer?: SseAnswer) => kept.server(await scriptedLegacySse(answer));
const stdio = (behaviour: Parameters<typeof stdioServer>[0]) => kept.script(stdioServer(behaviour));
const open = async (options: ConnectOptions) => kept.client(await connect({ ...base, ...options }));

interface Failure {
  error: TetherError;
  ms: number;
}

/** Awaits a promise that must reject with a TetherError; returns it and how long it took (real time). */
async function failure(run: () => Promise<unknown>): Promise<Failure> {
  const started = performance.now();
  try {
    await run();
  } catch (error) {
    const ms = performance.now() - started;
    assert.ok(TetherError.is(error), `expected a TetherError, got ${String(error)}`);
    return { error, ms };
  }
  throw new assert.AssertionError({ message: "expected a rejection, but it resolved" });
}

function describeError(e: TetherError): string {
  return JSON.stringify(e.toJSON());
}

/** Moves the fake clock to the pending timer of `ms` (the budget under test), once it is set. */
async function fire(clock: FakeClock, ms: number): Promise<void> {
  await clock.advanceTo(await clock.timer((t) => t.ms === ms, STUCK_MS));
}

/** A gate a held reply waits at until the test opens it. */
function opening(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A handler that waits at `gate` first; the response is left alone if the client hung up meanwhile. */
function held(gate: { opened: Promise<void> }, handler: Handler): Handler {
  return async (res, rec, req) => {
    await gate.opened;
    if (res.destroyed || res.writableEnded) return;
    await handler(res, rec, req);
  };
}

// ---------------------------------------------------------------- servers

const textResult = (rec: Recorded, body: string) =>
  rpcResult(rec.rpcId, { content: [{ type: "text", text: body }] });

/** `tools/list` of BIG_TOOL_COUNT tools with long descriptions: tens of KiB. */
const bigToolList: Handler = json(200, (rec) =>
  rpcResult(rec.rpcId, {
    tools: Array.from({ length: BIG_TOOL_COUNT }, (_, i) => ({
      name: `tool_${i}`,
      description: "d".repeat(1_000),
      inputSchema: { type: "object" },
    })),
  }),
);

/** A tool result of tens of KiB. */
const bigResult: Handler = json(200, (rec) => textResult(rec, "b".repeat(BIG_TOOL_COUNT * 1_000)));

/**
 * A legacy Streamable HTTP server whose `tools/call` is answered per tool name (`calls`); other
 * tools echo. `overrides` replace other methods (`tools/list`, `initialize`, ...).
 */
function streamable(calls: Record<string, Handler>, overrides: Overrides = {}): Handler {
  const fallback = legacyStreamableHandler();
  return legacyStreamableHandler({
    ...overrides,
    "tools/call": async (res, rec, req) => {
      const handler = calls[String(rec.rpcParams?.name)];
      await (handler ?? fallback)(res, rec, req);
    },
  });
}

/** A message a server received, whatever the transport. */
interface Received {
  method: string | undefined;
  id: unknown;
  params: Record<string, unknown> | undefined;
}

type Kind = "streamable-http" | "sse" | "stdio";
const KINDS: readonly Kind[] = ["streamable-http", "sse", "stdio"];

/** A legacy server of each transport whose `slow` tool answers only when the test releases it. */
interface HeldTarget {
  options: ConnectOptions;
  received(): Received[];
  /** How many calls of this tool reached the server. */
  calls(name: string): number;
  /** Answers every `slow` call held so far with "slow done". */
  release(client: Client): Promise<void>;
}

async function heldTarget(kind: Kind): Promise<HeldTarget> {
  const callsOf = (received: () => Received[]) => (name: string) =>
    received().filter((r) => r.method === "tools/call" && r.params?.name === name).length;
  if (kind === "stdio") {
    // The test has no line to the process but the client: a `release` call answers the held ones.
    const s = stdio({
      call: `
        const held = (globalThis.held ??= []);
        if (m.params.name === "slow") return void held.push(m.id);
        if (m.params.name === "release") for (const id of held.splice(0)) line(result(id, "slow done"));
        line(result(m.id, String(m.params.arguments?.text ?? m.params.name)));`,
    });
    const received = () =>
      s
        .log()
        .flatMap((e) =>
          e.event === "recv" && e.message
            ? [{ method: e.message.method, id: e.message.id, params: e.message.params }]
            : [],
        );
    return {
      options: { command: s.command, args: s.args },
      received,
      calls: callsOf(received),
      release: async (client) => {
        await client.callTool("release");
      },
    };
  }
  const gate = opening();
  const fromHttp = (s: HostileServer) => () =>
    s.requests.map((r) => ({ method: r.rpcMethod, id: r.rpcId, params: r.rpcParams }));
  if (kind === "sse") {
    const s = await sseServer((rec, stream) => {
      if (rec.rpcMethod !== "tools/call" || rec.rpcParams?.name !== "slow") return false;
      void gate.opened.then(() => {
        if (!stream.destroyed)
          stream.write(`event: message\ndata: ${JSON.stringify(textResult(rec, "slow done"))}\n\n`);
      });
      return true;
    });
    const received = fromHttp(s);
    return {
      options: { url: s.url, transport: "sse" },
      received,
      calls: callsOf(received),
      release: async () => gate.open(),
    };
  }
  const s = await http(
    streamable({
      slow: held(
        gate,
        json(200, (rec) => textResult(rec, "slow done")),
      ),
    }),
  );
  const received = fromHttp(s);
  return { options: { url: s.url }, received, calls: callsOf(received), release: async () => gate.open() };
}

/** Waits (real time, bounded) for an event: a request reaching the server, a progress report. */
function arrived(check: () => boolean, what: string): Promise<void> {
  return until(check, STUCK_MS, what);
}

const firstText = (result: { content: unknown[] }) => (result.content[0] as { text?: unknown }).text;

// ---------------------------------------------------------------- P1: opposite phase overrides

describe("P1: opposite phase overrides", () => {
  test("P1: a tiny discovery time budget with a large call budget fails during discovery", async () => {
    const s = await http(streamable({}, { initialize: hang() }));
    const clock = fakeClock();
    const opening = failure(() =>
      open({
        url: s.url,
        discovery: { timeoutMs: SHORT_DISCOVERY_MS },
        call: { timeoutMs: 20_000 },
        deps: { clock },
      }),
    );
    await arrived(() => s.rpcMethods().includes("initialize"), "initialize");
    await fire(clock, SHORT_DISCOVERY_MS);
    const { error } = await opening;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "initialize");
    assert.equal(clock.now(), SHORT_DISCOVERY_MS, "the discovery budget, not the call budget, ended it");
  });

  test("P1: the discovery deadline running out during prefetched tool listing is a discovery timeout, not a cancellation", async () => {
    const s = await http(streamable({}, { "tools/list": hang() }));
    const clock = fakeClock();
    const opening = failure(() =>
      open({
        url: s.url,
        prefetchTools: true,
        discovery: { timeoutMs: 500 },
        call: { timeoutMs: 20_000 },
        deps: { clock },
      }),
    );
    await arrived(() => s.rpcMethods().includes("tools/list"), "tools/list");
    await fire(clock, 500);
    const { error } = await opening;
    // Nobody cancelled: the discovery budget ran out (E3, X4). The CLI's `tools` always prefetches.
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "list_tools");
    assert.notEqual(error.cancellation, "caller");
    // The limit in force is the discovery budget, as the message says, not what was left of it.
    assert.equal(error.limits?.timeoutMs, 500, describeError(error));
  });

  test("P1: a large discovery time budget with a tiny call budget connects, then fails the call (phase call, effect unknown)", async () => {
    const target = await heldTarget("streamable-http");
    const clock = fakeClock();
    const client = await open({
      ...target.options,
      discovery: { timeoutMs: 10_000 },
      call: { timeoutMs: CALL_TIMEOUT_MS },
      deps: { clock },
    });
    const calling = failure(() => client.callTool("slow"));
    await arrived(() => target.calls("slow") === 1, "the call");
    await fire(clock, CALL_TIMEOUT_MS);
    const { error } = await calling;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "call");
    assert.equal(error.stage, "call");
    assert.equal(error.effect, "unknown");
    assert.equal(error.limits?.timeoutMs, CALL_TIMEOUT_MS);
    assert.equal(clock.now(), CALL_TIMEOUT_MS, "the call budget, not the discovery budget, ended it");
  });

  test("P1: a tiny discovery byte ceiling refuses a big tools/list reply at list_tools (prefetchTools), the call ceiling large", async () => {
    const s = await http(streamable({}, { "tools/list": bigToolList }));
    const { error } = await failure(() =>
      open({
        url: s.url,
        prefetchTools: true,
        discovery: { maxResponseBytes: SMALL_CEILING },
        call: { maxResponseBytes: 64 * 1024 * 1024 },
      }),
    );
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "response_too_large");
    assert.equal(error.stage, "list_tools");
    assert.equal(error.phase, "discovery");
    assert.ok((error.observedBytes ?? 0) > SMALL_CEILING, `observedBytes ${error.observedBytes}`);
    assert.equal(s.rpcMethods().filter((m) => m === "tools/call").length, 0);
  });

  test("P1: a tiny call byte ceiling fails the call while the listing passes under the discovery ceiling", async () => {
    const s = await http(streamable({ big: bigResult }, { "tools/list": bigToolList }));
    const client = await open({
      url: s.url,
      prefetchTools: true,
      discovery: { maxResponseBytes: 1024 * 1024 },
      call: { maxResponseBytes: SMALL_CEILING },
    });
    assert.equal(client.cachedTools?.length, BIG_TOOL_COUNT, "the big listing passed");
    const { error } = await failure(() => client.callTool("big"));
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "response_too_large");
    assert.equal(error.phase, "call");
    assert.equal(error.stage, "call");
    assert.ok((error.observedBytes ?? 0) > SMALL_CEILING, `observedBytes ${error.observedBytes}`);
    // P8: a byte ceiling says that repeating will not help.
    assert.match(error.toToolResult().content[0].text, /will not help/);
    // The reply had its own stream: the session is fine, and a small reply still fits.
    assert.equal(firstText(await client.callTool("echo", { text: "small" })), "small");
  });
});

// ---------------------------------------------------------------- P3, P4

describe("P3: an established session outlives the discovery deadline", () => {
  for (const kind of KINDS) {
    test(`P3: ${kind}: a call slower than the whole discovery budget succeeds after establishment`, async () => {
      const target = await heldTarget(kind);
      const clock = fakeClock();
      const client = await open({
        ...target.options,
        discovery: { timeoutMs: SHORT_DISCOVERY_MS },
        call: { timeoutMs: 10_000 },
        deps: { clock },
      });
      assert.equal(client.transportMode, kind);
      const calling = client.callTool("slow");
      await arrived(() => target.calls("slow") === 1, "the call");
      // Well past the discovery budget, well inside the call's own.
      await clock.advance(3 * SHORT_DISCOVERY_MS);
      await target.release(client);
      assert.equal(firstText(await calling), "slow done");
      assert.deepEqual(clock.fired(), [], "no limit fired: the discovery deadline ended with establishment");
      assert.equal(client.state, "open");
      assert.equal(firstText(await client.callTool("echo", { text: "still here" })), "still here");
    });
  }
});

describe("P4: each pending response is held to its own phase's budget", () => {
  test("P4: on one stdio stream, a slow tools/list passes under the discovery budget while a slow tools/call times out under the call budget", async () => {
    // tools/list is held until a `release` call; `slow` is never answered.
    const s = stdio({
      list: `(globalThis.lists ??= []).push(m.id);`,
      call: `
        if (m.params.name === "slow") return;
        for (const id of (globalThis.lists ?? []).splice(0))
          line({ jsonrpc: "2.0", id, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } });
        line(result(m.id, "released"));`,
    });
    const clock = fakeClock();
    const client = await open({
      command: s.command,
      args: s.args,
      discovery: { timeoutMs: 5_000 },
      call: { timeoutMs: CALL_TIMEOUT_MS },
      deps: { clock },
    });
    const listing = client.listTools();
    const calling = failure(() => client.callTool("slow"));
    await arrived(
      () => s.received(s.pids()[0]!).filter((m) => m === "tools/list" || m === "tools/call").length === 2,
      "tools/list and tools/call",
    );
    await fire(clock, CALL_TIMEOUT_MS);
    const { error } = await calling;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.phase, "call");
    assert.equal(
      clock.now(),
      CALL_TIMEOUT_MS,
      `the call was held to ${CALL_TIMEOUT_MS} ms, not the discovery budget`,
    );
    await client.callTool("release");
    assert.equal((await listing).length, 1, "the listing, under the discovery budget, still passed");
  });

  test("P4: and the other way round: tools/list times out under a short discovery budget while a slow call passes", async () => {
    const gate = opening();
    const s = await http(
      streamable(
        {
          slow: held(
            gate,
            json(200, (rec) => textResult(rec, "slow done")),
          ),
        },
        { "tools/list": hang() },
      ),
    );
    const clock = fakeClock();
    const client = await open({
      url: s.url,
      discovery: { timeoutMs: 600 },
      call: { timeoutMs: 10_000 },
      deps: { clock },
    });
    const listing = failure(() => client.listTools());
    const calling = client.callTool("slow");
    await arrived(
      () => s.rpcMethods().includes("tools/list") && s.rpcMethods().includes("tools/call"),
      "tools/list and tools/call",
    );
    await fire(clock, 600);
    const { error } = await listing;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "list_tools");
    gate.open();
    assert.equal(firstText(await calling), "slow done", "the call, under the call budget, still passed");
  });

  test("P4: concurrent big replies: tools/list is held to the discovery ceiling, tools/call to the call ceiling", async () => {
    const s = await http(streamable({ big: bigResult }, { "tools/list": bigToolList }));
    for (const [discovery, call, failing] of [
      [SMALL_CEILING, 1024 * 1024, "list"],
      [1024 * 1024, SMALL_CEILING, "call"],
    ] as const) {
      const client = await open({
        url: s.url,
        discovery: { maxResponseBytes: discovery },
        call: { maxResponseBytes: call },
      });
      const [listed, called] = await Promise.allSettled([client.listTools(), client.callTool("big")]);
      const refused = failing === "list" ? listed : called;
      const passed = failing === "list" ? called : listed;
      assert.equal(
        passed.status,
        "fulfilled",
        `${failing}: ${String((passed as PromiseRejectedResult).reason)}`,
      );
      assert.equal(refused.status, "rejected", `${failing} should have been refused`);
      const error = (refused as PromiseRejectedResult).reason as TetherError;
      assert.equal(error.code, "limit", describeError(error));
      assert.equal(error.phase, failing === "list" ? "discovery" : "call");
      assert.equal(error.stage, failing === "list" ? "list_tools" : "call");
    }
  });
});

// ---------------------------------------------------------------- P7, P8

describe("P7: caller cancellation is distinct from a timeout", () => {
  test("P7: aborting a call is code cancelled with the caller's reason as cause; a call timeout is code timeout", async () => {
    const target = await heldTarget("streamable-http");
    const clock = fakeClock();
    const client = await open({ ...target.options, call: { timeoutMs: 10_000 }, deps: { clock } });

    const controller = new AbortController();
    const reason = new Error("the user pressed stop");
    const cancelling = failure(() => client.callTool("slow", {}, { signal: controller.signal }));
    await arrived(() => target.calls("slow") === 1, "the first call");
    controller.abort(reason);
    const cancelled = await cancelling;
    assert.equal(cancelled.error.code, "cancelled", describeError(cancelled.error));
    assert.equal(cancelled.error.reason, "cancelled");
    assert.equal(cancelled.error.phase, "call");
    assert.equal(cancelled.error.stage, "call");
    assert.equal(cancelled.error.cancellation, "caller");
    assert.deepEqual(clock.fired(), [], "the abort alone ended it, no limit");
    const causes: unknown[] = [];
    for (let e: unknown = cancelled.error; e instanceof Error; e = e.cause) causes.push(e.cause);
    assert.ok(causes.includes(reason), "the caller's reason is kept in the cause chain");

    const timingOut = failure(() => client.callTool("slow", {}, { timeoutMs: CALL_TIMEOUT_MS }));
    await arrived(() => target.calls("slow") === 2, "the second call");
    await fire(clock, CALL_TIMEOUT_MS);
    const timedOut = await timingOut;
    assert.equal(timedOut.error.code, "timeout", describeError(timedOut.error));
    assert.equal(timedOut.error.reason, "deadline_exceeded");
    assert.notEqual(timedOut.error.cancellation, "caller");

    // Neither outcome broke the session.
    assert.equal(firstText(await client.callTool("echo", { text: "after" })), "after");
  });

  test("P7: a call whose signal is already aborted is cancelled, never reaches the server, and says effect none", async () => {
    const target = await heldTarget("streamable-http");
    const client = await open(target.options);
    const { error } = await failure(() =>
      client.callTool("echo", { text: "x" }, { signal: AbortSignal.abort(new Error("too late")) }),
    );
    assert.equal(error.code, "cancelled", describeError(error));
    // A later call on the same client: the cancelled one, had it been sent, would have come first.
    assert.equal(firstText(await client.callTool("echo", { text: "later" })), "later");
    assert.deepEqual(
      target
        .received()
        .filter((r) => r.method === "tools/call")
        .map((r) => (r.params?.arguments as { text?: unknown } | undefined)?.text),
      ["later"],
      "the cancelled call was never sent",
    );
    // CLI.md: effect is "unknown" only for a call that may have run; this one never left.
    assert.equal(error.effect, "none");
  });
});

describe("P8: a failed or timed-out tools/call is never re-sent", () => {
  for (const kind of KINDS) {
    test(`P8: ${kind}: a timed-out call is sent once, says effect unknown, and is cancelled with notifications/cancelled`, async () => {
      const target = await heldTarget(kind);
      const clock = fakeClock();
      const client = await open({ ...target.options, call: { timeoutMs: CALL_TIMEOUT_MS }, deps: { clock } });
      const calling = failure(() => client.callTool("slow"));
      await arrived(() => target.calls("slow") === 1, "the call");
      await fire(clock, CALL_TIMEOUT_MS);
      const { error } = await calling;
      assert.equal(error.code, "timeout", describeError(error));
      assert.equal(error.effect, "unknown");
      assert.match(error.toToolResult().content[0].text, /may or may not have run/);
      const cancels = () => target.received().filter((r) => r.method === "notifications/cancelled");
      await arrived(() => cancels().length > 0, "notifications/cancelled");
      // A later call on the same client: a re-sent call, or a second cancellation, came before it.
      assert.equal(firstText(await client.callTool("echo", { text: "later" })), "later");
      assert.equal(target.calls("slow"), 1, "tools/call was sent exactly once");
      const [call] = target.received().filter((r) => r.method === "tools/call");
      assert.equal(cancels().length, 1, "one notifications/cancelled");
      assert.equal(cancels()[0]!.params?.requestId, call!.id, "it names the timed-out request");
    });
  }

  test("P8: a call whose connection is reset mid-request is not re-sent and says effect unknown", async () => {
    const s = await http(streamable({ reset: destroy() }));
    const client = await open({ url: s.url });
    const { error } = await failure(() => client.callTool("reset"));
    assert.equal(error.code, "connection", describeError(error));
    assert.equal(error.effect, "unknown");
    // A later call on the same client: a re-sent one would have reached the server before it.
    assert.equal(firstText(await client.callTool("echo", { text: "later" })), "later");
    assert.equal(s.requests.filter((r) => r.rpcParams?.name === "reset").length, 1);
  });
});

// ---------------------------------------------------------------- progress

describe("P4: progress restarts a call's clock, never past its hard maximum", () => {
  /**
   * A Streamable HTTP server whose `progress` call replies with an event stream the test writes:
   * `report()` sends the next progress notification, `finish()` the result.
   */
  async function progressServer() {
    let stream: { res: ServerResponse; rec: Recorded } | undefined;
    let sent = 0;
    const s = await http(
      streamable({
        progress: (res, rec) => {
          openSse(res);
          stream = { res, rec };
        },
      }),
    );
    return {
      url: s.url,
      started: () => stream !== undefined,
      report() {
        const token = (stream!.rec.rpcParams?._meta as Record<string, unknown> | undefined)?.progressToken;
        sent++;
        writeSse(stream!.res, {
          event: "message",
          data: {
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: sent },
          },
        });
      },
      finish() {
        writeSse(stream!.res, { event: "message", data: textResult(stream!.rec, "progress done") });
        stream!.res.end();
      },
    };
  }

  /** Moves the clock by `ms`, then sends one progress notification and waits until it was seen. */
  /** A progress server and a client on a fake clock whose calls time out after CALL_TIMEOUT_MS; `seen` gathers progress. */
  async function progressCall() {
    const server = await progressServer();
    const clock = fakeClock();
    const client = await open({ url: server.url, call: { timeoutMs: CALL_TIMEOUT_MS }, deps: { clock } });
    const seen: number[] = [];
    const onProgress: NonNullable<CallOptions["onProgress"]> = (p) => seen.push(p.progress);
    return { server, clock, client, seen, onProgress };
  }

  async function progressAfter(
    clock: FakeClock,
    ms: number,
    server: Awaited<ReturnType<typeof progressServer>>,
    seen: number[],
  ): Promise<void> {
    await clock.advance(ms);
    const before = seen.length;
    server.report();
    await arrived(() => seen.length > before, "the progress notification reached onProgress");
  }

  test("P4: with resetTimeoutOnProgress, progress every 250 ms carries a call well past its 300 ms timeout", async () => {
    const { server, clock, client, seen, onProgress } = await progressCall();
    const options: CallOptions = {
      onProgress,
      resetTimeoutOnProgress: true,
      maxTotalTimeoutMs: 6_000,
    };
    const calling = client.callTool("progress", {}, options);
    await arrived(server.started, "the call");
    for (let i = 0; i < 4; i++) await progressAfter(clock, 250, server, seen);
    await clock.advance(250);
    server.finish();
    assert.equal(firstText(await calling), "progress done");
    assert.equal(clock.now(), 1_250, "it ran far past the 300 ms timeout");
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.deepEqual(clock.fired(), [], "each progress restarted the timeout before it fired");
  });

  test("P4: progress cannot carry a call past maxTotalTimeoutMs", async () => {
    const { server, clock, client, seen, onProgress } = await progressCall();
    const options: CallOptions = {
      onProgress,
      resetTimeoutOnProgress: true,
      maxTotalTimeoutMs: 900,
    };
    const calling = failure(() => client.callTool("progress", {}, options));
    await arrived(server.started, "the call");
    for (let i = 0; i < 3; i++) await progressAfter(clock, 250, server, seen);
    await clock.advance(250);
    const { error } = await calling;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "max_total_timeout");
    assert.equal(error.phase, "call");
    assert.equal(error.effect, "unknown");
    assert.deepEqual(
      clock.fired().map((t) => t.at),
      [900],
      "it ended at the hard maximum, though progress kept coming",
    );
  });

  test("P4: without resetTimeoutOnProgress, progress does not extend the call timeout", async () => {
    const { server, clock, client, seen, onProgress } = await progressCall();
    const calling = failure(() => client.callTool("progress", {}, { onProgress }));
    await arrived(server.started, "the call");
    await progressAfter(clock, 100, server, seen);
    await progressAfter(clock, 100, server, seen);
    await clock.advance(100);
    const { error } = await calling;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.deepEqual(seen, [1, 2], "progress was delivered");
    assert.deepEqual(
      clock.fired().map((t) => t.at),
      [CALL_TIMEOUT_MS],
      "it ended at its timeout, progress or not",
    );
  });
});

// ---------------------------------------------------------------- tool ceilings

describe("P1: tool listing ceilings", () => {
  const tool = (name: string, inputSchema: Record<string, unknown> = { type: "object" }) => ({
    name,
    inputSchema,
  });

  test("P1: maxTools: exactly maxTools tools are accepted; one fewer allowed is a limit error", async () => {
    const s = await http(
      streamable(
        {},
        {
          "tools/list": json(200, (rec) =>
            rpcResult(rec.rpcId, { tools: Array.from({ length: 6 }, (_, i) => tool(`t${i}`)) }),
          ),
        },
      ),
    );
    assert.equal((await (await open({ url: s.url, maxTools: 6 })).listTools()).length, 6);
    const client = await open({ url: s.url, maxTools: 5 });
    const { error } = await failure(() => client.listTools());
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "too_many_tools");
    assert.equal(error.stage, "list_tools");
    assert.equal(error.phase, "discovery");
    assert.equal(error.limits?.maxTools, 5);
  });

  test("P1: maxListPages: a cursor that never ends stops at the page ceiling", async () => {
    const s = await http(
      streamable(
        {},
        {
          "tools/list": json(200, (rec) => {
            const page = Number(String(rec.rpcParams?.cursor ?? "page-0").slice(5));
            return rpcResult(rec.rpcId, { tools: [tool(`t${page}`)], nextCursor: `page-${page + 1}` });
          }),
        },
      ),
    );
    const clock = fakeClock();
    const client = await open({ url: s.url, maxListPages: 4, deps: { clock } });
    const { error } = await failure(() => client.listTools());
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "too_many_pages");
    assert.equal(error.limits?.maxListPages, 4);
    assert.equal(
      s.rpcMethods().filter((m) => m === "tools/list").length,
      4,
      "exactly maxListPages pages asked for",
    );
    assert.deepEqual(clock.fired(), [], "it stopped at the ceiling, not at a timeout");
  });

  test("P1: a cursor that repeats ends the listing at once with a typed error, not a loop", async () => {
    const s = await http(
      streamable(
        {},
        {
          "tools/list": json(200, (rec) => rpcResult(rec.rpcId, { tools: [tool("t")], nextCursor: "again" })),
        },
      ),
    );
    const clock = fakeClock();
    const client = await open({ url: s.url, maxListPages: 50, deps: { clock } });
    const { error } = await failure(() => client.listTools());
    // A repeated cursor is the server's fault, caught at the first repeat: a protocol violation
    // (X4), not the page ceiling, which it never reaches.
    assert.equal(error.code, "protocol", describeError(error));
    assert.equal(error.reason, "cursor_loop");
    assert.equal(error.stage, "list_tools");
    assert.ok(s.rpcMethods().filter((m) => m === "tools/list").length <= 2, "stopped at the first repeat");
    assert.deepEqual(clock.fired(), [], "at once, not at a timeout");
  });

  test("P1: maxToolSchemaBytes: a schema of exactly the ceiling is accepted, one byte more is a limit error", async () => {
    const schema = { type: "object", description: "s".repeat(500) };
    const schemaBytes = Buffer.byteLength(JSON.stringify(schema));
    const s = await http(
      streamable(
        {},
        { "tools/list": json(200, (rec) => rpcResult(rec.rpcId, { tools: [tool("t", schema)] })) },
      ),
    );
    assert.equal((await (await open({ url: s.url, maxToolSchemaBytes: schemaBytes })).listTools()).length, 1);
    const client = await open({ url: s.url, maxToolSchemaBytes: schemaBytes - 1 });
    const { error } = await failure(() => client.listTools());
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "tool_schema_too_large");
    assert.equal(error.observedBytes, schemaBytes);
    assert.equal(error.limits?.maxToolSchemaBytes, schemaBytes - 1);
  });
});

// ---------------------------------------------------------------- maxFrameBytes

describe("P6: the unsolicited-frame ceiling on a shared stream", () => {
  const FRAME_BYTES = 4_096;

  test("P6: stdio: a notification of exactly maxFrameBytes passes; one byte more closes the session with a limit error", async () => {
    const s = stdio({
      call: `if (m.params.name === "noisy") write(Buffer.concat([exactNote(m.params.arguments.bytes), Buffer.from("\\n")]));
        line(result(m.id, "done"));`,
    });
    const client = await open({ command: s.command, args: s.args, maxFrameBytes: FRAME_BYTES });
    assert.equal(firstText(await client.callTool("noisy", { bytes: FRAME_BYTES })), "done");
    assert.equal(client.state, "open");

    const { error } = await failure(() => client.callTool("noisy", { bytes: FRAME_BYTES + 1 }));
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "frame_too_large");
    assert.equal(error.observedBytes, FRAME_BYTES + 1);
    assert.equal(error.limits?.maxFrameBytes, FRAME_BYTES);
    assert.notEqual(client.state, "open", "the stream cannot be resynchronised: the session is closed");
    const next = await failure(() => client.callTool("echo", { text: "x" }));
    assert.ok(["limit", "connection"].includes(next.error.code), describeError(next.error));
    // The session owned the process; closing it stopped the process.
    const [pid] = s.pids();
    const alive = () => {
      try {
        process.kill(pid!, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(), STUCK_MS, "the server process is gone");
  });
});
