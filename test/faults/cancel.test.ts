// A call we abandon is cancelled on the wire (CONTRACT S7, with C5, E4, K1): servers that hold a
// tools/call open and record every message they receive must get `notifications/cancelled` with
// the call's id, before the transport closes, whichever way the call was abandoned (its timeout,
// the caller's AbortSignal, Ctrl-C or SIGTERM to the CLI), on stdio, legacy Streamable HTTP and
// HTTP+SSE. On modern (2026-07-28) Streamable HTTP, closing the reply stream is the cancellation
// and no notification is sent.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { CLEANUP_GRACE_MS, type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { CANCEL_NOTICE_GRACE_MS } from "../../src/jsonrpc/session.ts";
import { SESSION_DELETE_TIMEOUT_MS } from "../../src/transport/streamable-http.ts";
import { until } from "../helpers/fake-clock.ts";
import {
  ECHO_TOOL,
  type HostileServer,
  hang,
  legacySseHandler,
  legacyStreamableHandler,
  MODERN_VERSION,
  modernStreamableHandler,
  openSse,
  type StdioScript,
  startHttp,
  startStdioScript,
  writeSse,
} from "../helpers/hostile.ts";
import { startCli } from "../helpers/process-tree.ts";

/** Room for a machine several times slower than idle. */
const SLACK_MS = 2_500;
const CALL_TIMEOUT_MS = 500;

const closers: (() => unknown)[] = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

/** One server that holds every tools/call open, and what it was sent. */
interface Holder {
  label: string;
  /** Connect options for the library. */
  options: Partial<ConnectOptions>;
  /** The CLI's target and options (everything but the command and the tool). */
  cli: { before: string[]; after: string[] };
  /** The ids of the tools/call requests received, in order. */
  calls(): (string | number)[];
  /** The `requestId` of every notifications/cancelled received, in order. */
  cancels(): unknown[];
}

/** Holds the reply open: an event stream that never carries the response (a priming event first on 2025-11-25). */
function holdStream(version: string) {
  return (res: ServerResponse) => {
    openSse(res);
    if (version === "2025-11-25") writeSse(res, { id: "prime-1", data: "" });
  };
}

async function streamableHolder(version: "2025-06-18" | "2025-11-25"): Promise<Holder> {
  const server = await startHttp(legacyStreamableHandler({ "tools/call": holdStream(version) }));
  closers.push(() => server.close());
  return {
    label: `Streamable HTTP ${version}`,
    options: { url: server.url, transport: "streamable-http", protocolVersion: version },
    cli: {
      before: [server.url],
      after: ["--transport", "streamable-http", "--protocol-version", version],
    },
    ...recorded(server),
  };
}

async function sseHolder(): Promise<Holder> {
  const server = await startHttp(legacySseHandler({ overrides: { "tools/call": () => undefined } }), {
    path: "/sse",
  });
  closers.push(() => server.close());
  return {
    label: "HTTP+SSE (2024-11-05)",
    options: { url: server.url, transport: "sse", protocolVersion: "2024-11-05" },
    cli: { before: [server.url], after: ["--transport", "sse", "--protocol-version", "2024-11-05"] },
    ...recorded(server),
  };
}

function recorded(server: HostileServer): Pick<Holder, "calls" | "cancels"> {
  return {
    calls: () =>
      server.requests.flatMap((r) =>
        r.rpcMethod === "tools/call" && r.rpcId !== undefined ? [r.rpcId] : [],
      ),
    cancels: () =>
      server.requests.flatMap((r) =>
        r.rpcMethod === "notifications/cancelled" ? [r.rpcParams?.requestId] : [],
      ),
  };
}

const STDIO_HOLDER = `
onMessage((m) => {
  if (m.id === undefined) return;
  const reply = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  if (m.method === "initialize")
    return reply({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "holder", version: "0.0.0" } });
  if (m.method === "tools/list") return reply({ tools: [${JSON.stringify(ECHO_TOOL)}] });
  if (m.method === "tools/call") return;
  send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
});
`;

function stdioHolder(): Holder {
  const script: StdioScript = startStdioScript(STDIO_HOLDER);
  closers.push(() => script.dispose());
  const received = (method: string) =>
    script.log().flatMap((e) => (e.event === "recv" && e.message?.method === method ? [e.message] : []));
  return {
    label: "stdio",
    options: { command: script.command, args: script.args, protocolVersion: "2025-06-18" },
    cli: { before: [], after: ["--protocol-version", "2025-06-18", "--", script.command, ...script.args] },
    calls: () => received("tools/call").map((m) => m.id as string | number),
    cancels: () => received("notifications/cancelled").map((m) => m.params?.requestId),
  };
}

const HOLDERS: [string, () => Holder | Promise<Holder>][] = [
  ["stdio", stdioHolder],
  ["Streamable HTTP 2025-06-18", () => streamableHolder("2025-06-18")],
  ["Streamable HTTP 2025-11-25", () => streamableHolder("2025-11-25")],
  ["HTTP+SSE", sseHolder],
];

async function open(h: Holder): Promise<Client> {
  const client = await connect({ eraHints: false, timeoutMs: 10_000, ...h.options } as ConnectOptions);
  closers.push(() => client.close());
  return client;
}

/** Closes right after the call was given up, as a caller does, and checks the server heard of it. */
async function assertCancelledOnClose(h: Holder, client: Client): Promise<void> {
  const started = performance.now();
  await client.close();
  const ms = performance.now() - started;
  const [id] = h.calls();
  assert.notEqual(id, undefined, "the server received the call");
  assert.deepEqual(h.cancels(), [id], "the server received notifications/cancelled for the call, once");
  assert.ok(ms <= CLEANUP_GRACE_MS + SLACK_MS, `close() took ${Math.round(ms)} ms`);
}

// Every test starts its own server (and client or CLI process): the tests run side by side.
describe("S7: cancelling a call", { concurrency: true }, () => {
  describe("S7: the library cancels an abandoned call on every transport", { concurrency: true }, () => {
    for (const [label, make] of HOLDERS) {
      test(`S7: a call timeout on ${label} sends notifications/cancelled before close() returns`, async () => {
        const h = await make();
        const client = await open(h);
        await assert.rejects(
          client.callTool("echo", { text: "hi" }, { timeoutMs: CALL_TIMEOUT_MS }),
          (e: unknown) => TetherError.is(e) && e.code === "timeout" && e.effect === "unknown",
        );
        await assertCancelledOnClose(h, client);
      });

      test(`S7 P7: the caller's AbortSignal on ${label} sends notifications/cancelled before close() returns`, async () => {
        const h = await make();
        const client = await open(h);
        const abort = new AbortController();
        const call = client.callTool("echo", { text: "hi" }, { signal: abort.signal });
        call.catch(() => {});
        await until(() => h.calls().length === 1, 10_000, "the server to receive the call");
        abort.abort(new Error("the user changed their mind"));
        await assert.rejects(call, (e: unknown) => TetherError.is(e) && e.code === "cancelled");
        await assertCancelledOnClose(h, client);
      });
    }

    test("S7 E4: a server that never answers the cancellation notice holds close() no longer than its grace", async () => {
      const server = await startHttp(
        legacyStreamableHandler({
          "tools/call": holdStream("2025-06-18"),
          "notifications/cancelled": hang(),
        }),
      );
      closers.push(() => server.close());
      const h: Holder = { label: "", options: {}, cli: { before: [], after: [] }, ...recorded(server) };
      const client = await open({
        ...h,
        options: { url: server.url, transport: "streamable-http", protocolVersion: "2025-06-18" },
      });
      await assert.rejects(client.callTool("echo", { text: "hi" }, { timeoutMs: CALL_TIMEOUT_MS }));
      const started = performance.now();
      await client.close();
      const ms = performance.now() - started;
      assert.deepEqual(h.cancels(), h.calls(), "the notice reached the server");
      assert.ok(ms >= CANCEL_NOTICE_GRACE_MS - 50, `close() waited for the notice (${Math.round(ms)} ms)`);
      assert.ok(
        ms <= CANCEL_NOTICE_GRACE_MS + SESSION_DELETE_TIMEOUT_MS + SLACK_MS,
        `close() took ${Math.round(ms)} ms`,
      );
      assert.ok(
        CANCEL_NOTICE_GRACE_MS + SESSION_DELETE_TIMEOUT_MS <= CLEANUP_GRACE_MS,
        "both fit in the cleanup grace",
      );
      // The session was still ended after the notice gave up.
      assert.equal(server.requests.at(-1)?.method, "DELETE");
    });

    test("S7: on modern Streamable HTTP the reply stream is closed and no notification is sent", async () => {
      let closedStreams = 0;
      const server = await startHttp(
        modernStreamableHandler({
          "tools/call": (res) => {
            res.once("close", () => closedStreams++);
            openSse(res);
          },
        }),
      );
      closers.push(() => server.close());
      const client = await connect({
        eraHints: false,
        timeoutMs: 10_000,
        url: server.url,
        transport: "streamable-http",
        protocolVersion: MODERN_VERSION,
      });
      closers.push(() => client.close());
      const abort = new AbortController();
      const call = client.callTool("echo", { text: "hi" }, { signal: abort.signal });
      call.catch(() => {});
      await until(() => server.rpcMethods().includes("tools/call"), 10_000, "the server to receive the call");
      abort.abort();
      await assert.rejects(call, (e: unknown) => TetherError.is(e) && e.code === "cancelled");
      await until(() => closedStreams === 1, 5_000, "the call's reply stream to be closed");
      // Observed after something that must come later: close() and its own traffic.
      await client.close();
      assert.ok(!server.rpcMethods().includes("notifications/cancelled"), server.rpcMethods().join(", "));
    });
  });

  describe("S7 K1: the CLI cancels the call in flight on SIGINT and SIGTERM", { concurrency: true }, () => {
    const cacheDir = mkdtempSync(join(tmpdir(), "tether-cancel-cache-"));
    after(() => rmSync(cacheDir, { recursive: true, force: true }));
    for (const [label, make] of HOLDERS.filter(([l]) => l !== "Streamable HTTP 2025-11-25")) {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        test(`S7 K1: ${signal} during a call on ${label} sends notifications/cancelled and exits 130 within the grace`, async (ctx) => {
          const h = await make();
          const cli = startCli(["call", ...h.cli.before, "echo", "text=hi", ...h.cli.after], {
            // A cache folder of its own, as the CLI runs beside the others.
            env: { TETHER_CACHE_DIR: mkdtempSync(join(cacheDir, "run-")) },
          });
          const exitedEarly = cli.exited.then((r) => {
            throw new Error(`the CLI exited before the call arrived: ${r.code} ${r.stderr}`);
          });
          exitedEarly.catch(() => {});
          await Promise.race([
            until(() => h.calls().length === 1, 15_000, "the server to receive the call"),
            exitedEarly,
          ]);
          // SIGINT as a terminal sends it (to the whole foreground group), SIGTERM as `kill` does.
          const sentAt = cli.signal(signal, { group: signal === "SIGINT" });
          const run = await cli.exited;
          const ms = run.exitedAt - sentAt;
          assert.equal(run.code, 130, run.stderr);
          assert.equal(run.stdout, "");
          const lines = run.stderr.trim().split("\n");
          assert.equal(lines.length, 1, `exactly one line on stderr: ${run.stderr}`);
          assert.equal((JSON.parse(lines[0]!) as { code?: string }).code, "cancelled");
          assert.deepEqual(
            h.cancels(),
            h.calls(),
            "the server received notifications/cancelled for the call",
          );
          assert.ok(ms <= CLEANUP_GRACE_MS + SLACK_MS, `${signal} to exit took ${Math.round(ms)} ms`);
          ctx.diagnostic(`${label}, ${signal}: exit ${Math.round(ms)} ms after the signal`);
        });
      }
    }
  });
});
