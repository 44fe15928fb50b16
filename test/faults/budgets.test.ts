// Phase budgets and ceilings (CONTRACT P1, P3, P4, P6, P7, P8) against scripted servers: each
// phase held to its own time and byte budget (opposite overrides fail in opposite phases), an
// established session that outlives the discovery deadline, caller abort apart from timeout, a
// timed-out call never re-sent, progress that restarts a call's clock up to its hard maximum,
// the tool-listing ceilings, and the unsolicited-frame ceiling on a shared stream.
//
// Budgets are short and margins generous (a noisy two-core machine): a timer outcome must take at
// least 0.8 × its limit and settle well before whatever it raced against.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type CallOptions, type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { delay, later, type SseAnswer, scriptedLegacySse, stdioServer } from "../fixtures/budgets/servers.ts";
import {
  destroy,
  type Handler,
  type HostileServer,
  hang,
  json,
  legacyStreamableHandler,
  type Overrides,
  type Recorded,
  rpcResult,
  type StdioScript,
  startHttp,
  startStdioScript,
} from "../helpers/hostile.ts";

/** Every connection: no remembered era (tests stay independent) and no optional GET stream. */
const base = { eraHints: false, listen: false } as const satisfies Partial<ConnectOptions>;

/** The discovery budget the P3 tests outlive, and how long their slow tool takes. */
const SHORT_DISCOVERY_MS = 300;
const SLOW_TOOL_MS = 800;
/** stdio spawns a process inside discovery, so its short budget leaves room for a busy machine. */
const STDIO_SHORT_DISCOVERY_MS = 1_500;
const STDIO_SLOW_TOOL_MS = 2_000;
const CALL_TIMEOUT_MS = 300;
/** A reply big enough to pass a small ceiling many times over. */
const BIG_TOOL_COUNT = 40;
const SMALL_CEILING = 8 * 1024;

// ---------------------------------------------------------------- bookkeeping

const servers: HostileServer[] = [];
const scripts: StdioScript[] = [];
const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  for (const s of scripts) s.dispose();
});

async function http(handler: Handler, path?: string): Promise<HostileServer> {
  const s = await startHttp(handler, path ? { path } : {});
  servers.push(s);
  return s;
}

async function sseServer(answer?: SseAnswer): Promise<HostileServer> {
  const s = await scriptedLegacySse(answer);
  servers.push(s);
  return s;
}

function stdio(behaviour: Parameters<typeof stdioServer>[0]): StdioScript {
  const s = startStdioScript(stdioServer(behaviour));
  scripts.push(s);
  return s;
}

async function open(options: ConnectOptions): Promise<Client> {
  const client = await connect({ ...base, ...options });
  clients.push(client);
  return client;
}

interface Failure {
  error: TetherError;
  ms: number;
}

/** Awaits a promise that must reject with a TetherError; returns it and how long it took. */
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

interface Target {
  options: ConnectOptions;
  received(): Received[];
}

/** A legacy server of each transport whose `slow` tool answers after `ms`; other tools echo. */
async function slowTarget(kind: Kind, ms: number): Promise<Target> {
  if (kind === "stdio") {
    const s = stdio({
      call: `if (m.params.name === "slow") await wait(${ms}); line(result(m.id, m.params.name === "slow" ? "slow done" : String(m.params.arguments?.text ?? "")));`,
    });
    return {
      options: { command: s.command, args: s.args },
      received: () =>
        s
          .log()
          .flatMap((e) =>
            e.event === "recv" && e.message
              ? [{ method: e.message.method, id: e.message.id, params: e.message.params }]
              : [],
          ),
    };
  }
  const fromHttp = (s: HostileServer) => () =>
    s.requests.map((r) => ({ method: r.rpcMethod, id: r.rpcId, params: r.rpcParams }));
  if (kind === "sse") {
    const s = await sseServer((rec, stream) => {
      if (rec.rpcMethod !== "tools/call" || rec.rpcParams?.name !== "slow") return false;
      setTimeout(() => {
        if (!stream.destroyed)
          stream.write(`event: message\ndata: ${JSON.stringify(textResult(rec, "slow done"))}\n\n`);
      }, ms);
      return true;
    });
    return { options: { url: s.url, transport: "sse" }, received: fromHttp(s) };
  }
  const s = await http(
    streamable({
      slow: later(
        ms,
        json(200, (rec) => textResult(rec, "slow done")),
      ),
    }),
  );
  return { options: { url: s.url }, received: fromHttp(s) };
}

const firstText = (result: { content: unknown[] }) => (result.content[0] as { text?: unknown }).text;

// ---------------------------------------------------------------- P1: opposite phase overrides

describe("P1: opposite phase overrides", () => {
  test("P1: a tiny discovery time budget with a large call budget fails during discovery", async () => {
    const s = await http(streamable({}, { initialize: later(3_000, legacyStreamableHandler()) }));
    const { error, ms } = await failure(() =>
      open({ url: s.url, discovery: { timeoutMs: SHORT_DISCOVERY_MS }, call: { timeoutMs: 20_000 } }),
    );
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "initialize");
    assert.ok(ms >= SHORT_DISCOVERY_MS * 0.8 && ms < 2_000, `settled after ${Math.round(ms)} ms`);
  });

  test("P1: the discovery deadline running out during prefetched tool listing is a discovery timeout, not a cancellation", async () => {
    const s = await http(streamable({}, { "tools/list": hang() }));
    const { error, ms } = await failure(() =>
      open({
        url: s.url,
        prefetchTools: true,
        discovery: { timeoutMs: 500 },
        call: { timeoutMs: 20_000 },
      }),
    );
    // Nobody cancelled: the discovery budget ran out (E3, X4). The CLI's `tools` always prefetches.
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "list_tools");
    assert.notEqual(error.cancellation, "caller");
    // The limit in force is the discovery budget, as the message says, not what was left of it.
    assert.equal(error.limits?.timeoutMs, 500, describeError(error));
    assert.ok(ms < 2_500, `settled after ${Math.round(ms)} ms`);
  });

  test("P1: a large discovery time budget with a tiny call budget connects, then fails the call (phase call, effect unknown)", async () => {
    const s = await http(
      streamable({
        slow: later(
          3_000,
          json(200, (rec) => textResult(rec, "late")),
        ),
      }),
    );
    const client = await open({
      url: s.url,
      discovery: { timeoutMs: 10_000 },
      call: { timeoutMs: CALL_TIMEOUT_MS },
    });
    const { error, ms } = await failure(() => client.callTool("slow"));
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.equal(error.phase, "call");
    assert.equal(error.stage, "call");
    assert.equal(error.effect, "unknown");
    assert.equal(error.limits?.timeoutMs, CALL_TIMEOUT_MS);
    assert.ok(ms >= CALL_TIMEOUT_MS * 0.8 && ms < 2_000, `settled after ${Math.round(ms)} ms`);
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
      const discoveryMs = kind === "stdio" ? STDIO_SHORT_DISCOVERY_MS : SHORT_DISCOVERY_MS;
      const slowMs = kind === "stdio" ? STDIO_SLOW_TOOL_MS : SLOW_TOOL_MS;
      const target = await slowTarget(kind, slowMs);
      const started = performance.now();
      const client = await open({
        ...target.options,
        discovery: { timeoutMs: discoveryMs },
        call: { timeoutMs: 10_000 },
      });
      assert.equal(client.transportMode, kind);
      const result = await client.callTool("slow");
      assert.equal(firstText(result), "slow done");
      assert.ok(performance.now() - started > discoveryMs, "the call ended after the discovery deadline");
      assert.equal(client.state, "open");
      assert.equal(firstText(await client.callTool("echo", { text: "still here" })), "still here");
    });
  }
});

describe("P4: each pending response is held to its own phase's budget", () => {
  test("P4: on one stdio stream, a slow tools/list passes under the discovery budget while a slow tools/call times out under the call budget", async () => {
    const s = stdio({
      list: `await wait(800); line({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } });`,
      call: `await wait(800); line(result(m.id, "late"));`,
    });
    const client = await open({
      command: s.command,
      args: s.args,
      discovery: { timeoutMs: 5_000 },
      call: { timeoutMs: CALL_TIMEOUT_MS },
    });
    const [listed, called] = await Promise.allSettled([
      client.listTools(),
      failure(() => client.callTool("echo")),
    ]);
    assert.equal(listed.status, "fulfilled", String((listed as PromiseRejectedResult).reason));
    assert.equal(called.status, "fulfilled");
    const { error, ms } = (called as PromiseFulfilledResult<Failure>).value;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.phase, "call");
    assert.ok(
      ms < 780,
      `the call was held to ${CALL_TIMEOUT_MS} ms, not the discovery budget (${Math.round(ms)} ms)`,
    );
  });

  test("P4: and the other way round: tools/list times out under a short discovery budget while a slow call passes", async () => {
    const slowList = later(1_500, legacyStreamableHandler());
    const s = await http(
      streamable(
        {
          slow: later(
            1_500,
            json(200, (rec) => textResult(rec, "slow done")),
          ),
        },
        { "tools/list": slowList },
      ),
    );
    const client = await open({ url: s.url, discovery: { timeoutMs: 600 }, call: { timeoutMs: 10_000 } });
    const [listed, called] = await Promise.allSettled([
      failure(() => client.listTools()),
      client.callTool("slow"),
    ]);
    assert.equal(called.status, "fulfilled", String((called as PromiseRejectedResult).reason));
    assert.equal(listed.status, "fulfilled");
    const { error } = (listed as PromiseFulfilledResult<Failure>).value;
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.phase, "discovery");
    assert.equal(error.stage, "list_tools");
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
    const target = await slowTarget("streamable-http", 5_000);
    const client = await open({ ...target.options, call: { timeoutMs: 10_000 } });

    const controller = new AbortController();
    const reason = new Error("the user pressed stop");
    setTimeout(() => controller.abort(reason), 150);
    const cancelled = await failure(() => client.callTool("slow", {}, { signal: controller.signal }));
    assert.equal(cancelled.error.code, "cancelled", describeError(cancelled.error));
    assert.equal(cancelled.error.reason, "cancelled");
    assert.equal(cancelled.error.phase, "call");
    assert.equal(cancelled.error.stage, "call");
    assert.equal(cancelled.error.cancellation, "caller");
    assert.ok(cancelled.ms < 1_500, `cancelled after ${Math.round(cancelled.ms)} ms`);
    const causes: unknown[] = [];
    for (let e: unknown = cancelled.error; e instanceof Error; e = e.cause) causes.push(e.cause);
    assert.ok(causes.includes(reason), "the caller's reason is kept in the cause chain");

    const timedOut = await failure(() => client.callTool("slow", {}, { timeoutMs: CALL_TIMEOUT_MS }));
    assert.equal(timedOut.error.code, "timeout", describeError(timedOut.error));
    assert.equal(timedOut.error.reason, "deadline_exceeded");
    assert.notEqual(timedOut.error.cancellation, "caller");

    // Neither outcome broke the session.
    assert.equal(firstText(await client.callTool("echo", { text: "after" })), "after");
  });

  test("P7: a call whose signal is already aborted is cancelled, never reaches the server, and says effect none", async () => {
    const target = await slowTarget("streamable-http", 5_000);
    const client = await open(target.options);
    const { error } = await failure(() =>
      client.callTool("echo", { text: "x" }, { signal: AbortSignal.abort(new Error("too late")) }),
    );
    assert.equal(error.code, "cancelled", describeError(error));
    await delay(200);
    assert.equal(target.received().filter((r) => r.method === "tools/call").length, 0, "nothing was sent");
    // CLI.md: effect is "unknown" only for a call that may have run; this one never left.
    assert.equal(error.effect, "none");
  });
});

describe("P8: a failed or timed-out tools/call is never re-sent", () => {
  for (const kind of KINDS) {
    test(`P8: ${kind}: a timed-out call is sent once, says effect unknown, and is cancelled with notifications/cancelled`, async () => {
      const target = await slowTarget(kind, 5_000);
      const client = await open({ ...target.options, call: { timeoutMs: CALL_TIMEOUT_MS } });
      const { error } = await failure(() => client.callTool("slow"));
      assert.equal(error.code, "timeout", describeError(error));
      assert.equal(error.effect, "unknown");
      assert.match(error.toToolResult().content[0].text, /may or may not have run/);
      // Long enough for a re-send, or a late cancellation, to show.
      await delay(700);
      const calls = target.received().filter((r) => r.method === "tools/call");
      assert.equal(calls.length, 1, "tools/call was sent exactly once");
      const cancels = target.received().filter((r) => r.method === "notifications/cancelled");
      assert.equal(cancels.length, 1, "one notifications/cancelled");
      assert.equal(cancels[0]!.params?.requestId, calls[0]!.id, "it names the timed-out request");
    });
  }

  test("P8: a call whose connection is reset mid-request is not re-sent and says effect unknown", async () => {
    const s = await http(streamable({ reset: destroy() }));
    const client = await open({ url: s.url });
    const { error } = await failure(() => client.callTool("reset"));
    assert.equal(error.code, "connection", describeError(error));
    assert.equal(error.effect, "unknown");
    await delay(500);
    assert.equal(s.rpcMethods().filter((m) => m === "tools/call").length, 1);
  });
});

// ---------------------------------------------------------------- progress

describe("P4: progress restarts a call's clock, never past its hard maximum", () => {
  /** A tool that sends progress every 100 ms for `ms`, then answers. */
  const progressServer = () =>
    stdio({
      call: `
        const token = m.params._meta?.progressToken;
        const total = m.params.arguments.ms;
        for (let t = 100; t <= total; t += 100) {
          await wait(100);
          if (token !== undefined) line({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: t, total } });
        }
        line(result(m.id, "progress done"));`,
    });

  async function progressClient(): Promise<Client> {
    const s = progressServer();
    return open({ command: s.command, args: s.args, call: { timeoutMs: CALL_TIMEOUT_MS } });
  }

  test("P4: with resetTimeoutOnProgress, progress every 100 ms carries a call well past its 300 ms timeout", async () => {
    const client = await progressClient();
    const seen: number[] = [];
    const options: CallOptions = {
      onProgress: (p) => seen.push(p.progress),
      resetTimeoutOnProgress: true,
      maxTotalTimeoutMs: 6_000,
    };
    const started = performance.now();
    const result = await client.callTool("progress", { ms: 1_200 }, options);
    assert.equal(firstText(result), "progress done");
    assert.ok(performance.now() - started >= 1_100, "it ran far past the 300 ms timeout");
    assert.ok(seen.length >= 10, `progress seen ${seen.length} times`);
  });

  test("P4: progress cannot carry a call past maxTotalTimeoutMs", async () => {
    const client = await progressClient();
    const options: CallOptions = {
      onProgress: () => {},
      resetTimeoutOnProgress: true,
      maxTotalTimeoutMs: 900,
    };
    const { error, ms } = await failure(() => client.callTool("progress", { ms: 5_000 }, options));
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "max_total_timeout");
    assert.equal(error.phase, "call");
    assert.equal(error.effect, "unknown");
    assert.ok(ms >= 900 * 0.8 && ms < 2_500, `settled after ${Math.round(ms)} ms`);
  });

  test("P4: without resetTimeoutOnProgress, progress does not extend the call timeout", async () => {
    const client = await progressClient();
    const options: CallOptions = { onProgress: () => {} };
    const { error, ms } = await failure(() => client.callTool("progress", { ms: 3_000 }, options));
    assert.equal(error.code, "timeout", describeError(error));
    assert.equal(error.reason, "deadline_exceeded");
    assert.ok(ms < 1_000, `settled after ${Math.round(ms)} ms`);
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
    const client = await open({ url: s.url, maxListPages: 4 });
    const { error, ms } = await failure(() => client.listTools());
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "too_many_pages");
    assert.equal(error.limits?.maxListPages, 4);
    assert.equal(
      s.rpcMethods().filter((m) => m === "tools/list").length,
      4,
      "exactly maxListPages pages asked for",
    );
    assert.ok(ms < 2_000, `settled after ${Math.round(ms)} ms`);
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
    const client = await open({ url: s.url, maxListPages: 50 });
    const { error, ms } = await failure(() => client.listTools());
    // A repeated cursor is the server's fault, caught at the first repeat: a protocol violation
    // (X4), not the page ceiling, which it never reaches.
    assert.equal(error.code, "protocol", describeError(error));
    assert.equal(error.reason, "cursor_loop");
    assert.equal(error.stage, "list_tools");
    assert.ok(s.rpcMethods().filter((m) => m === "tools/list").length <= 2, "stopped at the first repeat");
    assert.ok(ms < 2_000, `settled after ${Math.round(ms)} ms`);
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
    const stopped = async () => {
      for (let i = 0; i < 150; i++) {
        try {
          process.kill(pid!, 0);
        } catch {
          return true;
        }
        await delay(20);
      }
      return false;
    };
    assert.ok(await stopped(), "the server process is gone");
  });
});
