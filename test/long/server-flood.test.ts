// Server-initiated floods (CONTRACT S5, D2, M2, M4): servers that ask the client for things far
// faster than any working server would. Twenty thousand sampling requests inside one call's SSE
// reply, fifty thousand pings over stdio while a call waits, pings answered in bursts past
// Node's listener-leak alarm, notifications past the rate budget. The client must settle its
// call within budget + grace, hold bounded memory, send back a bounded number of answers, print
// no runtime warning, and still answer a server that asks normally.
//
// The two big floods run the client in its own process (test/fixtures/server-flood), so its peak
// RSS (maxRSS) and its process warnings are its own. The flood tests in test/long/flood.test.ts cover
// notification floods at the frame ceiling and progress inside one reply; these do not repeat them.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ServerResponse } from "node:http";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Client, type ConnectSettings, connect, type LifecycleEvent } from "../../src/index.ts";
import {
  INBOUND_BURST,
  INBOUND_RATE_PER_SECOND,
  MAX_INBOUND_IN_FLIGHT,
} from "../../src/jsonrpc/inbound-gate.ts";
import { drainedOrClosed } from "../fixtures/budgets/servers.ts";
import { runCli } from "../helpers/cli.ts";
import {
  type HostileServer,
  hostileSet,
  legacyStreamableHandler,
  openSse,
  type Recorded,
  rpcResult,
  type StdioScript,
} from "../helpers/hostile.ts";

const MiB = 1024 * 1024;
/** The call budget of every flood. */
const BUDGET_MS = 3_000;
/** How far past its budget a flooded call may settle: cleanup grace plus a busy machine. */
const GRACE_MS = 5_000;
/** Peak RSS the client process may gain while flooded (an unbounded queue costs hundreds). */
const RSS_BOUND_BYTES = 100 * MiB;
/** Sampling requests in the one SSE reply. */
const SAMPLING_FLOOD = 20_000;
/** Pings over stdio while the call waits. */
const PING_FLOOD = 50_000;
/** Pings the server sends at once before it waits for their answers: past Node's alarm at 10. */
const PING_BATCH = 11;
/** Waits that only fail when something is stuck. */
const STUCK_MS = 30_000;

const FLOOD_CLIENT = fileURLToPath(new URL("../fixtures/server-flood/flood-client.ts", import.meta.url));

const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/**
 * The most answers a client may send in `ms`: the bucket's burst, what it refills meanwhile, and
 * the requests already in flight.
 */
const answerBound = (ms: number) =>
  INBOUND_BURST + Math.ceil((INBOUND_RATE_PER_SECOND * ms) / 1000) + MAX_INBOUND_IN_FLIGHT;

// ---------------------------------------------------------------- bookkeeping

const kept = hostileSet();
after(kept.closeAll);
const { script } = kept;

/** A client of the script `s` (no remembered era) whose lifecycle events are collected, then handed to `onEvent`. */
async function openLogged(
  s: StdioScript,
  extra: Partial<ConnectSettings>,
  onEvent: (e: LifecycleEvent) => void = () => {},
): Promise<{ client: Client; events: LifecycleEvent[] }> {
  const events: LifecycleEvent[] = [];
  const client = await connect({
    command: s.command,
    args: s.args,
    eraHints: false,
    onEvent: (e) => {
      events.push(e);
      onEvent(e);
    },
    ...extra,
  });
  return { client: kept.client(client), events };
}

/** A POST that carries one of our answers: an id, no method. */
const isAnswer = (rec: Recorded) =>
  rec.method === "POST" && rec.rpcMethod === undefined && rec.rpcId !== undefined;

/**
 * A legacy Streamable HTTP server whose `tools/call` is `call`; answers we POST back get 202 (the
 * stock handler would answer them as unknown methods) with `connection: close`, and are counted
 * once the client closed that connection: by then it has taken in the 202, so its send settled.
 */
async function httpServer(
  call: (res: ServerResponse, rec: Recorded) => void | Promise<void>,
  onAnswer: (rec: Recorded) => void = () => {},
): Promise<HostileServer> {
  const stock = legacyStreamableHandler({ "tools/call": (res, rec) => call(res, rec) });
  return kept.http(async (res, rec, req) => {
    if (isAnswer(rec)) {
      req.socket.once("close", () => onAnswer(rec));
      res.writeHead(202, { connection: "close" }).end();
      return;
    }
    await stock(res, rec, req);
  });
}

interface ProbeReport {
  ok: boolean;
  text?: unknown;
  code?: string;
  reason?: string;
  elapsedMs: number;
  rssBeforeBytes: number;
  maxRssBytes: number;
  warnings: string[];
  dropEvents: number;
  droppedRequests: number;
  droppedNotifications: number;
}

/** Runs the flood client in its own process; resolves with its report and its stderr. */
function probe(config: Record<string, unknown>): Promise<{ report: ProbeReport; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", FLOOD_CLIENT, JSON.stringify(config)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    const killer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the flood client did not exit within ${STUCK_MS} ms; stderr: ${stderr}`));
    }, STUCK_MS + BUDGET_MS);
    child.once("close", (code) => {
      clearTimeout(killer);
      try {
        const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as ProbeReport;
        resolve({ report, stderr });
      } catch {
        reject(new Error(`the flood client exited ${code} without a report; stderr: ${stderr}`));
      }
    });
  });
}

/** Writes `count` events, a few hundred at a time, in as few writes as the socket takes. */
async function writeEvents(res: ServerResponse, count: number, event: (i: number) => unknown): Promise<void> {
  const PER_WRITE = 500;
  for (let i = 1; i <= count && !res.destroyed; i += PER_WRITE) {
    let chunk = "";
    for (let j = i; j < i + PER_WRITE && j <= count; j++)
      chunk += `event: message\ndata: ${JSON.stringify(event(j))}\n\n`;
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
}

// ---------------------------------------------------------------- the floods

describe("S5: a server that floods the client with requests", () => {
  for (const sampling of [true, false]) {
    const how = sampling ? "served by a sampling handler" : "refused for want of a handler";
    test(`S5: Streamable HTTP: ${SAMPLING_FLOOD} sampling requests in one call's SSE reply (${how}): the call times out within budget + grace, peak RSS stays bounded, and the server gets a bounded number of answers`, async (t) => {
      let answers = 0;
      let written = false;
      const s = await httpServer(
        async (res) => {
          openSse(res);
          await writeEvents(res, SAMPLING_FLOOD, (i) => ({
            jsonrpc: "2.0",
            id: `s-${i}`,
            method: "sampling/createMessage",
            params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 8 },
          }));
          written = true;
          // No reply: the stream stays open until the client leaves.
        },
        () => answers++,
      );
      const { report, stderr } = await probe({ url: s.url, tool: "flood", timeoutMs: BUDGET_MS, sampling });
      const growth = Math.max(0, report.maxRssBytes - report.rssBeforeBytes);
      t.diagnostic(
        `settled ${report.code}/${report.reason} in ${Math.round(report.elapsedMs)} ms (budget ${BUDGET_MS}); ` +
          `peak RSS +${mib(growth)} (max ${mib(report.maxRssBytes)}); the server wrote all ${SAMPLING_FLOOD}: ${written}; ` +
          `it got ${answers} answers; ${report.droppedRequests} requests dropped in ${report.dropEvents} reports`,
      );
      assert.equal(report.ok, false, "the reply never came");
      assert.equal(report.code, "timeout", JSON.stringify(report));
      assert.ok(report.elapsedMs < BUDGET_MS + GRACE_MS, `settled after ${Math.round(report.elapsedMs)} ms`);
      assert.ok(growth < RSS_BOUND_BYTES, `peak RSS grew ${mib(growth)}`);
      assert.ok(answers >= 1, "requests within the bounds are still answered");
      assert.ok(
        answers <= answerBound(report.elapsedMs),
        `the server got ${answers} answers in ${Math.round(report.elapsedMs)} ms`,
      );
      assert.ok(report.droppedRequests >= 1, "the flood was dropped and counted");
      assert.ok(report.dropEvents >= 1, "the drops were reported");
      assert.ok(
        report.dropEvents <= 2 + Math.ceil(report.elapsedMs / 1000),
        `${report.dropEvents} drop reports: at most one a second`,
      );
      assert.deepEqual(report.warnings, [], "no process warning");
      assert.equal(stderr, "", "nothing on stderr");
    });
  }

  test(`S5: stdio: ${PING_FLOOD} pings while a call waits: the call times out within budget + grace, and the server gets a bounded number of answers`, async (t) => {
    const s = script(`
      onMessage((m) => {
        if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "pinger", version: "0" } } });
        if (m.method === "tools/call") {
          let all = "";
          for (let i = 1; i <= ${PING_FLOOD}; i++) all += JSON.stringify({ jsonrpc: "2.0", id: "p-" + i, method: "ping" }) + "\\n";
          process.stdout.write(all, () => log({ event: "flooded" }));
          return;
        }
        if (m.id !== undefined && m.method !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
      });
    `);
    const { report, stderr } = await probe({
      command: s.command,
      args: s.args,
      tool: "flood",
      timeoutMs: BUDGET_MS,
    });
    const answers = s
      .log()
      .filter(
        (e) =>
          e.event === "recv" && e.message?.method === undefined && String(e.message?.id).startsWith("p-"),
      ).length;
    const growth = Math.max(0, report.maxRssBytes - report.rssBeforeBytes);
    t.diagnostic(
      `settled ${report.code}/${report.reason} in ${Math.round(report.elapsedMs)} ms (budget ${BUDGET_MS}); ` +
        `peak RSS +${mib(growth)}; the server got ${answers} answers; ${report.droppedRequests} pings dropped`,
    );
    assert.equal(report.code, "timeout", JSON.stringify(report));
    assert.ok(report.elapsedMs < BUDGET_MS + GRACE_MS, `settled after ${Math.round(report.elapsedMs)} ms`);
    assert.ok(answers >= 1, "pings within the bounds are still answered");
    assert.ok(
      answers <= answerBound(report.elapsedMs),
      `the server got ${answers} answers in ${Math.round(report.elapsedMs)} ms`,
    );
    assert.ok(report.droppedRequests >= 1, "the flood was dropped and counted");
    assert.ok(growth < RSS_BOUND_BYTES, `peak RSS grew ${mib(growth)}`);
    assert.deepEqual(report.warnings, [], "no process warning");
    assert.equal(stderr, "", "nothing on stderr");
  });
});

test("S5: stdio: a server that stops reading its stdin while it pings with large ids: the answers wait on one drain listener, and no MaxListenersExceededWarning", async () => {
  // Each answer echoes a 60 KB id: a few fill the pipe, and every later send waits for it to drain.
  const s = script(`
      onMessage((m) => {
        if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "deaf", version: "0" } } });
        if (m.method === "tools/call") {
          // Deaf from here on; the timer keeps it alive (a paused stdin does not) until it is stopped.
          process.stdin.pause();
          setInterval(() => {}, 1000);
          const big = "x".repeat(60000);
          for (let i = 0; i < 40; i++) send({ jsonrpc: "2.0", id: big + i, method: "ping" });
        }
      });
    `);
  const budget = 1_000;
  const { report, stderr } = await probe({
    command: s.command,
    args: s.args,
    tool: "deaf",
    timeoutMs: budget,
  });
  assert.equal(report.code, "timeout", JSON.stringify(report));
  assert.ok(report.elapsedMs < budget + GRACE_MS, `settled after ${Math.round(report.elapsedMs)} ms`);
  assert.deepEqual(report.warnings, [], "no process warning");
  assert.equal(stderr, "", "nothing on stderr");
});

// ---------------------------------------------------------------- pings in bursts, answered

/**
 * A server whose `tools/call` reply stream carries `pings` pings, PING_BATCH at a time (one
 * write each), each batch sent once the previous one is answered and those answers' sends have
 * settled (so at most one batch is in flight: within the bound, nothing is dropped); then the
 * call's result.
 */
async function batchPinger(pings: number): Promise<{ server: HostileServer; answered: () => number }> {
  let answered = 0;
  let wake: (() => void) | undefined;
  const server = await httpServer(
    async (res, rec) => {
      openSse(res);
      const gone = new Promise<void>((resolve) => res.once("close", () => resolve()));
      for (let sent = 0; sent < pings && !res.destroyed; ) {
        const batch = Math.min(PING_BATCH, pings - sent);
        let chunk = "";
        for (let i = 0; i < batch; i++)
          chunk += `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: `ping-${sent + i}`, method: "ping" })}\n\n`;
        sent += batch;
        const target = sent;
        const all = new Promise<void>((resolve) => {
          wake = () => {
            if (answered >= target) resolve();
          };
        });
        res.write(chunk);
        await Promise.race([all, gone]);
      }
      if (res.destroyed) return;
      const text = `answered ${answered} pings`;
      res.end(
        `event: message\ndata: ${JSON.stringify(rpcResult(rec.rpcId, { content: [{ type: "text", text }] }))}\n\n`,
      );
    },
    () => {
      answered++;
      wake?.();
    },
  );
  return { server, answered: () => answered };
}

describe("S5: pings in bursts during a call print no runtime warning", () => {
  for (const pings of [PING_BATCH, 100]) {
    test(`S5: the CLI answers ${pings} pings during a call (${PING_BATCH} at once) and its stderr stays empty`, async () => {
      const { server, answered } = await batchPinger(pings);
      const run = await runCli(["call", server.url, "echo", "text=hi", "--call-timeout", "20000"], {
        timeoutMs: STUCK_MS,
      });
      assert.equal(run.stderr, "", "nothing on stderr on success");
      assert.equal(run.code, 0);
      assert.match(run.stdout, new RegExp(`answered ${pings} pings`));
      assert.equal(answered(), pings);
    });
  }

  test(`S5: the library answers 100 pings during a call (${PING_BATCH} at once) with no MaxListenersExceededWarning`, async () => {
    const { server, answered } = await batchPinger(100);
    const { report, stderr } = await probe({ url: server.url, tool: "echo", timeoutMs: 20_000 });
    assert.equal(report.ok, true, JSON.stringify(report));
    assert.equal(report.text, "answered 100 pings");
    assert.equal(answered(), 100);
    assert.deepEqual(report.warnings, [], "no process warning");
    assert.equal(stderr, "");
    assert.equal(report.dropEvents, 0, "nothing was dropped");
  });
});

// ---------------------------------------------------------------- notifications and the normal case

describe("S5: notifications share the budget; progress for a waiting call is its own", () => {
  test("S5, D1, D2: stdio: a notification flood past the budget is dropped and reported a few times (to a listener that throws), while the call's own progress all arrives", async () => {
    const LOGS = 5_000;
    const PROGRESS = 1_000;
    const s = script(`
      onMessage((m) => {
        if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {}, logging: {} }, serverInfo: { name: "chatty", version: "0" } } });
        if (m.method === "tools/call") {
          const token = m.params._meta?.progressToken;
          let all = "";
          for (let i = 1; i <= ${LOGS}; i++) {
            all += JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "line " + i } }) + "\\n";
            if (i % ${LOGS / PROGRESS} === 0) all += JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: i / ${LOGS / PROGRESS} } }) + "\\n";
          }
          all += JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "done" }] } }) + "\\n";
          process.stdout.write(all);
        }
      });
    `);
    const { client, events } = await openLogged(s, {}, (e) => {
      if (e.type === "inbound_dropped") throw new Error("a listener that fails");
    });
    const progress: number[] = [];
    const started = performance.now();
    const result = await client.callTool("chat", {}, { onProgress: (p) => progress.push(p.progress) });
    const ms = performance.now() - started;
    await client.close();
    const drops = events.flatMap((e) => (e.type === "inbound_dropped" ? [e] : []));
    const dropped = drops.reduce((n, e) => n + e.notifications, 0);
    assert.equal((result.content[0] as { text?: unknown }).text, "done");
    assert.equal(progress.length, PROGRESS, "every progress notification of the call arrived");
    assert.ok(
      progress.every((p, i) => p === i + 1),
      "in order",
    );
    assert.ok(dropped >= LOGS - answerBound(ms), `${dropped} of ${LOGS} log notifications dropped`);
    assert.ok(drops.length <= 2 + Math.ceil(ms / 1000), `${drops.length} drop reports`);
    for (const e of drops) {
      assert.deepEqual(
        Object.keys(e).sort(),
        ["attempt", "elapsedMs", "mode", "notifications", "requests", "type"],
        "a report is counts only",
      );
      assert.equal(e.requests, 0);
    }
    // The last report comes before the closure's (the silent probe's process closed first).
    assert.ok(
      events.findLastIndex((e) => e.type === "closed") >
        events.findLastIndex((e) => e.type === "inbound_dropped"),
      "the last report comes before the session's closed event",
    );
  });

  test("S5, M4: without a flood, a server's roots/list and ping are answered as before", async () => {
    const s = script(`
      let call;
      onMessage((m) => {
        if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "asker", version: "0" } } });
        if (m.method === "tools/call") {
          call = m.id;
          send({ jsonrpc: "2.0", id: "ping-1", method: "ping" });
          return send({ jsonrpc: "2.0", id: "roots-1", method: "roots/list" });
        }
        if (m.id === "roots-1") send({ jsonrpc: "2.0", id: call, result: { content: [{ type: "text", text: JSON.stringify(m.result ?? m.error) }] } });
      });
    `);
    const { client, events } = await openLogged(s, {
      handlers: { roots: () => ({ roots: [{ uri: "file:///work", name: "work" }] }) },
    });
    const result = await client.callTool("ask");
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), {
      roots: [{ uri: "file:///work", name: "work" }],
    });
    await client.close();
    // The process that served the call: the last one (a silent probe's process comes first).
    const pid = s.pids().at(-1);
    const pingAnswers = s
      .log()
      .filter(
        (e) =>
          e.pid === pid && e.event === "recv" && e.message?.id === "ping-1" && e.message.method === undefined,
      );
    assert.equal(pingAnswers.length, 1, "the ping was answered once");
    assert.equal(events.filter((e) => e.type === "inbound_dropped").length, 0, "nothing was dropped");
  });
});
