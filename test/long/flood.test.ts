// Floods (CONTRACT C2, C5, C9, P4–P6): servers that push unsolicited notifications as fast as
// the client takes them (stdio, the legacy SSE stream, the standalone GET stream of Streamable
// HTTP), thousands of progress notifications inside one call's SSE reply, a thousand calls held
// open at once, and unsolicited frames one byte over the frame ceiling. The client must keep to
// its frame ceiling and its in-flight bound, its live heap must stay flat, and everything must
// settle once it is closed.
//
// The heap is measured in this process after full collections (`gc` is exposed at run time), so
// the figure includes the in-process servers; they write with back-pressure, so what they hold
// is bounded. Bounds are generous: a leak per frame would pass them many times over.

import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { after, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  type Client,
  type ConnectOptions,
  type ConnectSettings,
  connect,
  type LifecycleEvent,
  TetherError,
} from "../../src/index.ts";
import {
  delay,
  drainedOrClosed,
  type SseAnswer,
  scriptedLegacySse,
  sseNotificationOfBytes,
  stdioServer,
} from "../fixtures/budgets/servers.ts";
import {
  type Handler,
  hostileSet,
  json,
  legacyStreamableHandler,
  modernStreamableHandler,
  openSse,
  type Recorded,
  rpcResult,
} from "../helpers/hostile.ts";
import { isAlive } from "../helpers/toolkit.ts";

const KiB = 1024;
const MiB = 1024 * KiB;

/** The unsolicited-frame ceiling of every flood: small, so a second of flooding is many frames. */
const FRAME_BYTES = 512;
/**
 * The flood runs, with calls going on, until this many frames reached the client (10 MB: a leak
 * of a few hundred bytes a frame would pass the heap bound) and at least FLOOD_MIN_MS passed.
 */
const FLOOD_FRAMES = 20_000;
const FLOOD_MIN_MS = 500;
/** Calls that must be answered while the flood runs. */
const FLOOD_CALLS = 3;
/** Waits that only fail when something is stuck: long, so a busy machine does not fail them. */
const STUCK_MS = 30_000;
/** What the live heap may grow while flooded (a leak of one frame each would be megabytes more). */
const HEAP_BOUND_BYTES = 8 * MiB;
/** Progress notifications inside one call's reply. */
const PROGRESS_COUNT = 5_000;
/** Calls fired at once against a server that holds every one. */
const HELD_CALLS = 1_000;
/** The default of `maxInFlight`. */
const DEFAULT_MAX_IN_FLIGHT = 64;
/** How long anything may take to settle after a close or a refusal (the point of those tests). */
const SETTLE_MS = 5_000;

// ---------------------------------------------------------------- measuring

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The live heap: what is left after full collections. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/** Sockets, servers, pipes and child processes of this process, by type; only those, since timers come and go with the runner. */
function ioHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) {
    if (/TCP|Pipe|Process|UDP|TTY/.test(type)) counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}
const openFds = (): number | undefined =>
  existsSync("/proc/self/fd") ? readdirSync("/proc/self/fd").length : undefined;
/** Before the first test: what the runner itself holds. */
const atStart = { handles: ioHandles(), fds: openFds() };

/** Process warnings, in order (a MaxListenersExceededWarning is Node's own leak alarm). */
const warnings: Error[] = [];
process.on("warning", (w) => warnings.push(w));

/** A turn of the event loop: what was queued for the next tick has run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Polls `check` until it holds; fails naming `what` after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline)
      throw new assert.AssertionError({ message: `not within ${ms} ms: ${what}` });
    await delay(10);
  }
}

/** Awaits `promise`, failing naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new assert.AssertionError({ message: `not within ${ms} ms: ${what}` })),
      ms,
    );
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function describeError(e: unknown): string {
  return TetherError.is(e) ? JSON.stringify(e.toJSON()) : String(e);
}

const firstText = (result: { content: unknown[] }) => (result.content[0] as { text?: unknown }).text;

// ---------------------------------------------------------------- bookkeeping

const kept = hostileSet();
after(kept.closeAll);
const { http, script } = kept;
const sseServer = async (answer: SseAnswer) => kept.server(await scriptedLegacySse(answer));
/** Every connection: no remembered era, so the tests stay independent. */
const open = async (options: ConnectOptions) => kept.client(await connect({ eraHints: false, ...options }));

// ---------------------------------------------------------------- writing as fast as the peer reads

interface Pump {
  /** Frames handed to the socket so far. */
  frames(): number;
  /** Resolves once the peer hung up (the response closed). */
  gone: Promise<void>;
}

/** Writes `frame` again and again, waiting only when the socket is full, until the peer hangs up. */
function pump(res: ServerResponse, frame: Buffer): Pump {
  let frames = 0;
  const gone = new Promise<void>((resolve) => res.once("close", () => resolve()));
  void (async () => {
    while (!res.destroyed) {
      frames++;
      if (!res.write(frame)) await drainedOrClosed(res);
    }
  })();
  return { frames: () => frames, gone };
}

// ---------------------------------------------------------------- flooding servers, one per transport

type FloodKind = "stdio" | "sse" | "streamable-get";
const FLOOD_KINDS: readonly FloodKind[] = ["stdio", "sse", "streamable-get"];
const WHERE: Record<FloodKind, string> = {
  stdio: "stdio",
  sse: "the legacy SSE stream",
  "streamable-get": "the Streamable HTTP GET stream",
};

interface Flooder {
  options: ConnectOptions;
  /** Starts the flood once the client is connected (a call on the shared-stream transports). */
  start(client: Client): Promise<void>;
  /** Unsolicited frames the server has written so far. */
  frames(): number;
  /** Resolves once the server saw the client leave (its stream closed, or its process exited). */
  gone(): Promise<void>;
}

/**
 * A server of `kind` that floods unsolicited `notifications/message` frames of `frameBytes`
 * (as that transport counts a frame) once told to; `echo` answers `text`; `hold` never answers.
 */
async function flooder(kind: FloodKind, frameBytes: number): Promise<Flooder> {
  if (kind === "stdio") {
    const s = script(
      stdioServer({
        call: `
          const a = m.params.arguments ?? {};
          if (m.params.name === "hold") return;
          if (m.params.name !== "flood") return line(result(m.id, String(a.text ?? "")));
          line(result(m.id, "flooding"));
          // A stdio frame is the line without its newline.
          const frame = Buffer.concat([exactNote(${frameBytes}), Buffer.from("\\n")]);
          for (let frames = 1; ; frames++) {
            if (!process.stdout.write(frame)) await new Promise((r) => process.stdout.once("drain", r));
            // Now and then: say how far it got, and let stdin in, so calls are still answered.
            if (frames % 256 === 0 || frames === 1) {
              log({ event: "flooded", frames });
              await new Promise((r) => setImmediate(r));
            }
          }`,
      }),
    );
    const flooded = () => {
      const last = s
        .log()
        .filter((e) => (e.event as string) === "flooded")
        .at(-1) as { frames?: number } | undefined;
      return last?.frames ?? 0;
    };
    return {
      options: { command: s.command, args: s.args },
      start: async (client) => {
        assert.equal(firstText(await client.callTool("flood")), "flooding");
      },
      frames: flooded,
      gone: async () => {
        const [pid] = s.pids();
        await until(() => !isAlive(pid!), SETTLE_MS, "the server process exited");
      },
    };
  }

  const frame = sseNotificationOfBytes(frameBytes);
  let flood: Pump | undefined;
  if (kind === "sse") {
    const s = await sseServer((rec, stream) => {
      if (rec.rpcMethod !== "tools/call") return false;
      if (rec.rpcParams?.name === "hold") return true;
      if (rec.rpcParams?.name !== "flood") return false;
      stream.write(
        `event: message\ndata: ${JSON.stringify(rpcResult(rec.rpcId, { content: [{ type: "text", text: "flooding" }] }))}\n\n`,
      );
      flood = pump(stream, frame);
      return true;
    });
    return {
      options: { url: s.url, transport: "sse" },
      start: async (client) => {
        assert.equal(firstText(await client.callTool("flood")), "flooding");
      },
      frames: () => flood?.frames() ?? 0,
      gone: () => flood?.gone ?? Promise.resolve(),
    };
  }

  // Streamable HTTP: the flood is the standalone GET stream the client opens after the handshake.
  const s = await http(
    legacyStreamableHandler({
      GET: (res) => {
        openSse(res);
        flood = pump(res, frame);
      },
      "tools/call": (res, rec, req) => {
        if (rec.rpcParams?.name === "hold") return;
        return legacyStreamableHandler()(res, rec, req);
      },
    }),
  );
  return {
    options: { url: s.url },
    start: () => until(() => flood !== undefined, STUCK_MS, "the client opened its GET stream"),
    frames: () => flood?.frames() ?? 0,
    gone: () => flood?.gone ?? Promise.resolve(),
  };
}

// ---------------------------------------------------------------- (a) unsolicited floods

describe("P6: a flood of unsolicited notifications, each exactly at the frame ceiling", () => {
  for (const kind of FLOOD_KINDS) {
    test(`P6: ${WHERE[kind]}: the client takes the flood, calls still answer, the heap stays flat, and closing stops it`, async (t) => {
      const f = await flooder(kind, FRAME_BYTES);
      const client = await open({ ...f.options, maxFrameBytes: FRAME_BYTES, timeoutMs: STUCK_MS });
      await f.start(client);
      // A moment of flooding first, so buffers and compiled code are in the baseline.
      await until(() => f.frames() >= 1_000, STUCK_MS, "the flood got going");
      const heapBefore = liveHeap();
      const framesBefore = f.frames();

      const started = performance.now();
      let calls = 0;
      const flooding = () =>
        f.frames() - framesBefore < FLOOD_FRAMES ||
        calls < FLOOD_CALLS ||
        performance.now() - started < FLOOD_MIN_MS;
      while (flooding() && performance.now() - started < STUCK_MS) {
        const text = `call ${calls} under the flood`;
        assert.equal(firstText(await client.callTool("echo", { text }, { timeoutMs: STUCK_MS })), text);
        calls++;
      }
      const ms = performance.now() - started;
      const flooded = f.frames() - framesBefore;
      const heapGrowth = liveHeap() - heapBefore;
      t.diagnostic(
        `${flooded} frames of ${FRAME_BYTES} bytes (${mib(flooded * FRAME_BYTES)}) in ${Math.round(ms)} ms, ` +
          `${calls} calls answered meanwhile; live heap ${heapGrowth >= 0 ? "+" : ""}${mib(heapGrowth)}`,
      );

      assert.equal(client.state, "open", "frames at the ceiling are accepted");
      assert.ok(
        !flooding(),
        `in ${STUCK_MS} ms only ${flooded} frames flowed and ${calls} calls were answered`,
      );
      assert.ok(heapGrowth <= HEAP_BOUND_BYTES, `the live heap grew ${mib(heapGrowth)}`);

      await within(client.close(), SETTLE_MS, "close() under the flood");
      await within(f.gone(), SETTLE_MS, "the server saw the client leave");
      // The server saw the client leave; a turn later its pump has written nothing more.
      const after = f.frames();
      await turn();
      if (kind !== "stdio") assert.equal(f.frames(), after, "the server stopped writing");
    });
  }
});

// ---------------------------------------------------------------- (d) frames over the ceiling

describe("P6: a flood of unsolicited frames, each one byte over the frame ceiling", () => {
  for (const kind of FLOOD_KINDS) {
    test(`P6: ${WHERE[kind]}: the first frame over maxFrameBytes closes the session with a limit error, and the flood stops`, async (t) => {
      const f = await flooder(kind, FRAME_BYTES + 1);
      const events: LifecycleEvent[] = [];
      const client = await open({
        ...f.options,
        maxFrameBytes: FRAME_BYTES,
        onEvent: (e) => events.push(e),
      });
      const heapBefore = liveHeap();
      // A call left waiting: the closure must settle it with the closure's cause.
      const held = client.callTool("hold").then(
        () => undefined,
        (error: unknown) => error,
      );
      await f.start(client).catch(() => {});
      const error = await within(held, SETTLE_MS, "the pending call settled");
      assert.ok(TetherError.is(error), describeError(error));
      assert.equal(error.code, "limit", describeError(error));
      assert.equal(error.reason, "frame_too_large");
      assert.equal(error.observedBytes, FRAME_BYTES + 1, "what was read: one frame, one byte over");
      assert.equal(error.limits?.maxFrameBytes, FRAME_BYTES);
      assert.notEqual(client.state, "open", "a shared stream cannot be resynchronised");
      const closed = events.find((e) => e.type === "closed");
      assert.equal(closed?.type === "closed" ? closed.closure : undefined, "limit");

      const next = await client.callTool("echo", { text: "after" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(TetherError.is(next), "the closed client refuses further calls");

      await within(f.gone(), SETTLE_MS, "the server saw the client leave");
      await within(client.close(), SETTLE_MS, "close() after the refusal");
      const written = f.frames();
      const heapGrowth = liveHeap() - heapBefore;
      t.diagnostic(
        `${kind === "stdio" ? "the server process was stopped" : `the server wrote ${written} frames (${mib(written * (FRAME_BYTES + 1))}) before the client left`}; live heap ${mib(heapGrowth)}`,
      );
      // What the server wrote is what the socket buffers took before the client hung up.
      assert.ok(written * (FRAME_BYTES + 1) <= 16 * MiB, `the server wrote ${written} frames`);
      assert.ok(heapGrowth <= HEAP_BOUND_BYTES, `the live heap grew ${mib(heapGrowth)}`);
    });
  }
});

// ---------------------------------------------------------------- (b) progress inside one reply

type ReplyKind = "legacy" | "modern";

/** A Streamable HTTP server whose `work` tool streams `count` progress notifications, then its result. */
async function progressServer(
  kind: ReplyKind,
  count: number,
): Promise<{ url: string; stream: () => Pump | undefined; written: () => number }> {
  let current: Pump | undefined;
  let written = 0;
  const work: Handler = async (res, rec) => {
    const token = (rec.rpcParams?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    openSse(res);
    const gone = new Promise<void>((resolve) => res.once("close", () => resolve()));
    current = { frames: () => written, gone };
    for (let i = 1; i <= count && !res.destroyed; i++) {
      const note = {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: token, progress: i, total: count },
      };
      written++;
      if (!res.write(`event: message\ndata: ${JSON.stringify(note)}\n\n`)) await drainedOrClosed(res);
    }
    if (res.destroyed) return;
    const result = { content: [{ type: "text", text: "worked" }] };
    res.end(
      `event: message\ndata: ${JSON.stringify(rpcResult(rec.rpcId, kind === "modern" ? { resultType: "complete", ...result } : result))}\n\n`,
    );
  };
  const handler = kind === "modern" ? modernStreamableHandler : legacyStreamableHandler;
  const fallback = handler();
  const s = await http(
    handler({
      "tools/call": (res, rec, req) =>
        rec.rpcParams?.name === "work" ? work(res, rec, req) : fallback(res, rec, req),
    }),
  );
  return { url: s.url, stream: () => current, written: () => written };
}

describe("P4: thousands of progress notifications inside one call's SSE reply", () => {
  for (const kind of ["legacy", "modern"] as const) {
    test(`P4: ${kind} Streamable HTTP: ${PROGRESS_COUNT} progress notifications reach onProgress in order, and the call still resolves`, async (t) => {
      const s = await progressServer(kind, PROGRESS_COUNT);
      const client = await open({ url: s.url, listen: false });
      assert.equal(firstText(await client.callTool("echo", { text: "warm" })), "warm");
      const heapBefore = liveHeap();
      const seen: number[] = [];
      const result = await client.callTool(
        "work",
        {},
        {
          onProgress: (p) => seen.push(p.progress),
          resetTimeoutOnProgress: true,
          timeoutMs: 2_000,
          maxTotalTimeoutMs: 15_000,
        },
      );
      const heapGrowth = liveHeap() - heapBefore;
      t.diagnostic(`${seen.length} progress notifications; live heap ${mib(heapGrowth)}`);
      assert.equal(firstText(result), "worked");
      assert.equal(seen.length, PROGRESS_COUNT, "every progress notification was delivered once");
      assert.ok(
        seen.every((p, i) => p === i + 1),
        "in the order they were sent",
      );
      assert.ok(heapGrowth <= HEAP_BOUND_BYTES, `the live heap grew ${mib(heapGrowth)}`);
      // The call's listener is gone: a later call sees none of it and still works.
      assert.equal(firstText(await client.callTool("echo", { text: "after" })), "after");
      await within(client.close(), SETTLE_MS, "close()");
    });
  }

  test("P5: progress notifications count toward the reply's byte ceiling: past it the reply is refused and its stream cancelled", async (t) => {
    const CEILING = 64 * KiB;
    // Far more than the ceiling: about 150 bytes a notification.
    const s = await progressServer("legacy", 1_000_000);
    const client = await open({ url: s.url, listen: false });
    let progress = 0;
    const error = await client
      .callTool("work", {}, { onProgress: () => progress++, maxResponseBytes: CEILING })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(TetherError.is(error), describeError(error));
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "response_too_large");
    assert.ok(
      (error.observedBytes ?? 0) > CEILING && (error.observedBytes ?? 0) <= CEILING + 64 * KiB,
      `observedBytes ${error.observedBytes}: just past the ceiling`,
    );
    assert.ok(
      progress > 0 && progress < 1_000,
      `${progress} notifications were delivered before the refusal`,
    );
    await within(s.stream()!.gone, SETTLE_MS, "the reply stream was cancelled");
    t.diagnostic(
      `refused at ${error.observedBytes} bytes after ${progress} notifications; the server wrote ${s.written()}`,
    );
    assert.ok(s.written() < 50_000, `the server wrote ${s.written()} notifications before the client left`);
    // The reply had its own stream: the session is intact (P6 closes only shared streams).
    assert.equal(client.state, "open");
    assert.equal(firstText(await client.callTool("echo", { text: "after" })), "after");
  });
});

// ---------------------------------------------------------------- (c) a thousand calls held open

type HoldKind = "streamable-http" | "modern-http" | "sse" | "stdio";
const HOLD_KINDS: readonly HoldKind[] = ["streamable-http", "modern-http", "sse", "stdio"];

interface Holder {
  options: ConnectOptions;
  /** Calls marked `hold` that the server has received. */
  seen(): number;
  /** The most it has held at once. */
  maxOpen(): number;
  /** Answers everything held, and everything from now on, at once. */
  release(): void;
  /** Resolves once the server holds nothing for the client any more (answered or abandoned). */
  drained(): Promise<void>;
  /** Drops the server's own record of requests, so the heap figures are the client's. */
  forget(): void;
}

const echoArgs = (text: string, hold: boolean) => ({ text, hold });

/**
 * A server of `kind` whose `echo` answers at once, except calls marked `hold`: those it keeps
 * until released (then answers them, and every later one, at once).
 */
async function holder(kind: HoldKind): Promise<Holder> {
  if (kind === "stdio") {
    const s = script(`
      let open = 0, max = 0, released = false;
      const held = [];
      const answer = (m) => send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: String(m.params.arguments?.text ?? "") }] } });
      const release = (m) => { open--; answer(m); };
      process.on("SIGUSR2", () => { released = true; for (const m of held.splice(0)) release(m); });
      process.on("exit", () => log({ event: "max", max }));
      onMessage((m) => {
        if (m.id === undefined || typeof m.method !== "string") return;
        if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "holder", version: "0" } } });
        if (m.method !== "tools/call") return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
        if (m.params.arguments?.hold !== true) return answer(m);
        open++;
        if (open > max) max = open;
        if (released) release(m); else held.push(m);
      });
    `);
    const pid = () => s.pids()[0]!;
    return {
      options: { command: s.command, args: s.args },
      seen: () =>
        s
          .log()
          .filter(
            (e) =>
              e.event === "recv" &&
              e.message?.method === "tools/call" &&
              (e.message.params?.arguments as { hold?: unknown } | undefined)?.hold === true,
          ).length,
      maxOpen: () => {
        const entry = s.log().find((e) => (e.event as string) === "max") as { max?: number } | undefined;
        return entry?.max ?? Number.NaN;
      },
      release: () => process.kill(pid(), "SIGUSR2"),
      drained: () => until(() => !isAlive(pid()), SETTLE_MS, "the server process exited"),
      forget: () => {},
    };
  }

  let open = 0;
  let maxOpen = 0;
  let seen = 0;
  let released = false;
  const held: (() => void)[] = [];
  /** Holds one request (or answers it at once); `answer` writes its reply unless the client left. */
  const hold = (rec: Recorded, res: ServerResponse, answer: () => void, gone: Promise<void>) => {
    if ((rec.rpcParams?.arguments as { hold?: unknown } | undefined)?.hold !== true) return answer();
    seen++;
    open++;
    if (open > maxOpen) maxOpen = open;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      open--;
      return true;
    };
    void gone.then(settle);
    const reply = () => {
      if (settle() && !res.destroyed) answer();
    };
    if (released) reply();
    else held.push(reply);
  };
  const common = {
    seen: () => seen,
    maxOpen: () => maxOpen,
    release: () => {
      released = true;
      for (const reply of held.splice(0)) reply();
    },
    drained: () => until(() => open === 0, SETTLE_MS, `the server still holds ${open} requests`),
  };
  const echo = (rec: Recorded, modern: boolean) => {
    const content = [
      { type: "text", text: String((rec.rpcParams?.arguments as { text?: unknown })?.text ?? "") },
    ];
    return rpcResult(rec.rpcId, modern ? { resultType: "complete", content } : { content });
  };

  if (kind === "sse") {
    // One listener per stream, however many requests it carries.
    const closed = new WeakMap<ServerResponse, Promise<void>>();
    const s = await sseServer((rec, stream) => {
      if (rec.rpcMethod !== "tools/call") return false;
      let gone = closed.get(stream);
      if (!gone) {
        gone = new Promise<void>((resolve) => stream.once("close", () => resolve()));
        closed.set(stream, gone);
      }
      const answer = () => stream.write(`event: message\ndata: ${JSON.stringify(echo(rec, false))}\n\n`);
      hold(rec, stream, answer, gone);
      return true;
    });
    return { options: { url: s.url, transport: "sse" }, ...common, forget: () => s.requests.splice(0) };
  }
  const modern = kind === "modern-http";
  const handler = modern ? modernStreamableHandler : legacyStreamableHandler;
  const s = await http(
    handler({
      "tools/call": (res, rec, req) => {
        const gone = new Promise<void>((resolve) => res.once("close", () => resolve()));
        hold(rec, res, () => json(200, echo(rec, modern))(res, rec, req), gone);
      },
    }),
  );
  return { options: { url: s.url }, ...common, forget: () => s.requests.splice(0) };
}

/**
 * Connects and fills the client's paths once: `maxInFlight` calls at once that are answered, so
 * the shared HTTP pool already holds a socket per slot before the heap is measured.
 */
async function warmedClient(h: Holder, extra: ConnectSettings = {}): Promise<Client> {
  const client = await open({ ...h.options, ...extra });
  await Promise.all(
    Array.from({ length: DEFAULT_MAX_IN_FLIGHT }, (_, i) =>
      client.callTool("echo", echoArgs(`warm ${i}`, false)),
    ),
  );
  return client;
}

/** Fires HELD_CALLS calls marked `hold`; each settles to its result or its error. */
function fireHeld(client: Client): Promise<unknown>[] {
  return Array.from({ length: HELD_CALLS }, (_, i) =>
    client.callTool("echo", echoArgs(`held ${i}`, true), { timeoutMs: 20_000 }).then(
      (r) => r,
      (e: unknown) => e,
    ),
  );
}

describe("P4: a thousand calls against a server that answers none until released", () => {
  for (const kind of HOLD_KINDS) {
    test(`P4: ${kind}: with maxInFlight at its default the server never holds more than 64; released, all ${HELD_CALLS} resolve`, async (t) => {
      const h = await holder(kind);
      const client = await warmedClient(h);
      h.forget();
      const heapBefore = liveHeap();
      const calls = fireHeld(client);
      await until(() => h.seen() >= DEFAULT_MAX_IN_FLIGHT, STUCK_MS, "the first calls reached the server");
      // A call past the bound that arrives later still shows: maxOpen, checked below, counts it.
      assert.equal(h.seen(), DEFAULT_MAX_IN_FLIGHT, "back-pressure held every call past the bound");
      const heapHeld = liveHeap() - heapBefore;

      h.release();
      const results = await within(Promise.all(calls), STUCK_MS, `all ${HELD_CALLS} calls settled`);
      const wrong = results.findIndex(
        (r, i) => TetherError.is(r) || firstText(r as { content: unknown[] }) !== `held ${i}`,
      );
      assert.equal(wrong, -1, `call ${wrong} got ${describeError(results[wrong])}`);
      assert.equal(h.seen(), HELD_CALLS, "every call was sent exactly once");
      h.forget();
      const heapDone = liveHeap() - heapBefore;
      await within(client.close(), SETTLE_MS, "close()");
      await h.drained();
      t.diagnostic(
        `the server held at most ${h.maxOpen()} at once; live heap with ${HELD_CALLS} pending ${mib(heapHeld)}, ` +
          `after they all resolved ${mib(heapDone)}`,
      );
      assert.ok(h.maxOpen() <= DEFAULT_MAX_IN_FLIGHT, `the server held ${h.maxOpen()} at once`);
      assert.ok(heapDone <= HEAP_BOUND_BYTES, `the live heap grew ${mib(heapDone)}`);
    });
  }

  for (const kind of HOLD_KINDS) {
    test(`C2: ${kind}: closing with 64 calls held and ${HELD_CALLS - DEFAULT_MAX_IN_FLIGHT} waiting for a slot settles all ${HELD_CALLS}, and nothing more is sent`, async () => {
      const h = await holder(kind);
      const client = await open(h.options);
      const heapBefore = liveHeap();
      const outcomes = fireHeld(client);
      await until(() => h.seen() >= DEFAULT_MAX_IN_FLIGHT, STUCK_MS, "the first calls reached the server");
      const started = performance.now();
      await within(client.close(), SETTLE_MS, "close() with a thousand calls pending");
      const errors = await within(Promise.all(outcomes), SETTLE_MS, "every call settled");
      const ms = performance.now() - started;
      const codes = new Set(errors.map((e) => (TetherError.is(e) ? e.code : "resolved")));
      assert.deepEqual([...codes], ["connection"], `every call failed as closed: ${[...codes].join(", ")}`);
      assert.ok(ms < SETTLE_MS, `settled ${Math.round(ms)} ms after close()`);
      await h.drained();
      assert.equal(h.seen(), DEFAULT_MAX_IN_FLIGHT, "no waiting call left after the close");
      h.forget();
      const heapGrowth = liveHeap() - heapBefore;
      assert.ok(heapGrowth <= HEAP_BOUND_BYTES, `the live heap grew ${mib(heapGrowth)}`);
    });
  }

  test("P8: calls still waiting for a slot when the client closes never left, so their effect is none", async () => {
    const h = await holder("streamable-http");
    const client = await open(h.options);
    const outcomes = fireHeld(client);
    await until(() => h.seen() >= DEFAULT_MAX_IN_FLIGHT, STUCK_MS, "the first calls reached the server");
    await client.close();
    const errors = (await Promise.all(outcomes)).filter(TetherError.is);
    assert.equal(errors.length, HELD_CALLS);
    assert.equal(h.seen(), DEFAULT_MAX_IN_FLIGHT);
    // Slots are granted in order: the first 64 were sent, the rest never left the client.
    const sent = errors.slice(0, DEFAULT_MAX_IN_FLIGHT);
    const unsent = errors.slice(DEFAULT_MAX_IN_FLIGHT);
    assert.ok(
      sent.every((e) => e.effect === "unknown"),
      "a call the server received may have run",
    );
    const effects = new Set(unsent.map((e) => e.effect));
    assert.deepEqual(
      [...effects],
      ["none"],
      `the ${unsent.length} calls that never left report effect ${[...effects].join(", ")}`,
    );
  });
});

// ---------------------------------------------------------------- Node's own leak alarm

describe("P4: a client at its in-flight bound trips no listener-leak warning", () => {
  const cases: { name: string; kind: HoldKind; extra?: ConnectSettings }[] = [
    { name: "legacy Streamable HTTP", kind: "streamable-http" },
    {
      name: "legacy Streamable HTTP without the GET stream",
      kind: "streamable-http",
      extra: { listen: false },
    },
    { name: "modern Streamable HTTP", kind: "modern-http" },
    { name: "legacy SSE", kind: "sse" },
    { name: "stdio", kind: "stdio" },
  ];
  for (const c of cases) {
    test(`P4: ${c.name}: ${DEFAULT_MAX_IN_FLIGHT} calls in flight on one client raise no MaxListenersExceededWarning`, async () => {
      const h = await holder(c.kind);
      const client = await open({ ...h.options, ...c.extra });
      const from = warnings.length;
      const calls = Array.from({ length: DEFAULT_MAX_IN_FLIGHT }, (_, i) =>
        client.callTool("echo", echoArgs(`${i}`, true), { timeoutMs: 20_000 }),
      );
      await until(() => h.seen() >= DEFAULT_MAX_IN_FLIGHT, STUCK_MS, "every call reached the server");
      h.release();
      await within(Promise.all(calls), STUCK_MS, "every call resolved");
      await within(client.close(), SETTLE_MS, "close()");
      // Warnings are emitted on the next tick: a turn of the event loop later they are in.
      await turn();
      const raised = warnings.slice(from).filter((w) => w.name === "MaxListenersExceededWarning");
      const where = raised[0]?.stack
        ?.split("\n")
        .filter((l) => l.includes("/src/"))
        .slice(0, 2)
        .map((l) => l.trim())
        .join(" ← ");
      assert.equal(raised.length, 0, `${raised[0]?.message ?? ""} ${where ?? ""}`);
    });
  }
});

// ---------------------------------------------------------------- afterwards

describe("C9: after every flood, nothing is left behind", () => {
  test("C9: once the clients and servers are closed, this process holds no more sockets, pipes, children or descriptors than before the first test", async () => {
    await kept.closeAll();
    const settled = () =>
      JSON.stringify(ioHandles()) === JSON.stringify(atStart.handles) && openFds() === atStart.fds;
    await until(settled, SETTLE_MS, "handles and descriptors back where they started").catch(() => {});
    assert.deepEqual(ioHandles(), atStart.handles, "sockets, pipes and child processes");
    assert.equal(openFds(), atStart.fds, "open file descriptors");
  });
});
