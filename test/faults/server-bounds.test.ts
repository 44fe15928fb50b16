// What a server controls is bounded before it is kept (CONTRACT S8, with P8 and X4), against real
// servers on stdio, Streamable HTTP (JSON and SSE replies) and legacy HTTP+SSE
// (test/fixtures/bounds/bounds-server.mjs): a listing whose every page carries an 8 MiB cursor
// stops at the first one and costs a few MiB, not hundreds; short cursors still stop at the page
// cap and a repeated one is still a loop; a reply nested 100,000 levels deep is a `protocol`
// error in the phase it arrived in, with its effect (a result that arrived means the tool ran),
// through the library and through the built CLI; and a too-deep notification on a shared stream
// is dropped while the session carries on.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  type Client,
  type ConnectSettings,
  connect,
  type HttpTarget,
  type StdioTarget,
} from "../../src/index.ts";
import { MAX_JSON_DEPTH } from "../../src/jsonrpc/json-depth.ts";
import { MAX_CURSOR_CHARS } from "../../src/options/limits.ts";
import { bundled } from "../helpers/child-exit.ts";
import { errorRecord, runCli, runProcess } from "../helpers/cli.ts";
import { rejection } from "../helpers/failures.ts";
import {
  type HostileServer,
  legacySseHandler,
  openSse,
  type Recorded,
  startHttp,
  writeSse,
} from "../helpers/hostile.ts";

const MiB = 1024 * 1024;
const SERVER = fileURLToPath(new URL("../fixtures/bounds/bounds-server.mjs", import.meta.url));
const CURSOR_CHILD = fileURLToPath(new URL("../fixtures/bounds/cursor-child.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What one 8 MiB page may add to the client's resident memory (one reply, read and parsed). */
const MAX_CURSOR_GROWTH_BYTES = 96 * MiB;
const CHILD_LIMIT_MS = 45_000;

type Behaviour =
  | "huge-cursors"
  | "short-cursors"
  | "loop-cursor"
  | "deep-call"
  | "deep-error"
  | "deep-notify"
  | "deep-list";

interface BoundsModule {
  answerText(message: unknown, behaviour: Behaviour, state: { pages: number }): string[];
  newState(): { pages: number };
  HUGE_CURSOR_CHARS: number;
}
const bounds = (await import(
  new URL("../fixtures/bounds/bounds-server.mjs", import.meta.url).href
)) as BoundsModule;

/** Every connection: a legacy pin (no probe), no remembered era, no optional GET stream. */
const base = {
  protocolVersion: "2025-06-18",
  eraHints: false,
  listen: false,
} as const satisfies ConnectSettings;

// ---------------------------------------------------------------- servers

interface Target {
  options: HttpTarget | StdioTarget;
  /** resources/list pages served so far. */
  pages(): number;
  /** The CLI's way to the same server. */
  cliTarget: string[];
  close(): Promise<void>;
}

const toClose: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of toClose.reverse()) await c();
});

/** The bounds server over stdio; resources/list pages are counted in a log file it appends to. */
function stdioTarget(behaviour: Behaviour): Target {
  const dir = mkdtempSync(join(tmpdir(), "tether-bounds-"));
  const log = join(dir, "pages.log");
  writeFileSync(log, "");
  const args = [SERVER, behaviour, log];
  const target: Target = {
    options: { command: process.execPath, args },
    pages: () => readFileSync(log, "utf8").split("\n").filter(Boolean).length,
    cliTarget: ["--", process.execPath, ...args],
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
  toClose.push(target.close);
  return target;
}

/** The bounds server over Streamable HTTP: each reply as a JSON body, or as events on an SSE stream. */
async function httpTarget(behaviour: Behaviour, reply: "json" | "sse"): Promise<Target> {
  const state = bounds.newState();
  const server: HostileServer = await startHttp((res: ServerResponse, rec: Recorded) => {
    if (rec.method !== "POST") {
      res.writeHead(405, { allow: "POST" });
      res.end();
      return;
    }
    const texts = bounds.answerText(rec.body, behaviour, state);
    if (texts.length === 0) {
      res.writeHead(202);
      res.end();
      return;
    }
    if (reply === "json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(texts.at(-1));
      return;
    }
    openSse(res);
    for (const data of texts) writeSse(res, { event: "message", data });
    res.end();
  });
  const target: Target = {
    options: { url: server.url },
    pages: () => state.pages,
    cliTarget: [server.url],
    close: () => server.close(),
  };
  toClose.push(target.close);
  return target;
}

async function client(target: Target, extra: ConnectSettings = {}): Promise<Client> {
  const c = await connect({ ...base, ...target.options, ...extra });
  toClose.push(() => c.close());
  return c;
}

// ---------------------------------------------------------------- cursors

interface CursorReport {
  baselineRss: number;
  peakRss: number;
  growthBytes: number;
  elapsedMs: number;
  outcome: {
    code?: string;
    reason?: string;
    stage?: string;
    phase?: string;
    limits?: Record<string, number>;
  };
}

/** Runs the memory probe (test/fixtures/bounds/cursor-child.ts) in its own process against a target. */
function cursorChild(target: Target): Promise<CursorReport> {
  const env: Record<string, string> = {};
  if ("url" in target.options) env.TETHER_URL = String(target.options.url);
  else env.TETHER_STDIO = JSON.stringify([target.options.command, ...(target.options.args ?? [])]);
  // The probe runs bundled with the library source (see bundled()), without a TypeScript loader.
  return bundled(CURSOR_CHILD).then((script) => cursorRun(script, env));
}

async function cursorRun(script: string, env: Record<string, string>): Promise<CursorReport> {
  const run = await runProcess(process.execPath, ["--expose-gc", script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    timeoutMs: CHILD_LIMIT_MS,
    name: "the cursor probe",
  });
  if (run.code !== 0) throw new Error(`the cursor probe exited ${run.code}; stderr: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "") as CursorReport;
}

const transports = [
  { name: "stdio", make: (b: Behaviour) => Promise.resolve(stdioTarget(b)) },
  { name: "Streamable HTTP", make: (b: Behaviour) => httpTarget(b, "json") },
] as const;

for (const { name, make } of transports) {
  describe(`cursors (${name})`, () => {
    test(`S8: 8 MiB cursors stop the listing at the first page with a limit error, and memory grows by a few MiB (${name})`, async (t) => {
      const target = await make("huge-cursors");
      const report = await cursorChild(target);
      t.diagnostic(
        `8 MiB cursors (${name}): RSS growth ${(report.growthBytes / MiB).toFixed(1)} MiB, ` +
          `${target.pages()} page(s), ${report.elapsedMs.toFixed(0)} ms`,
      );
      assert.deepEqual(report.outcome, {
        code: "limit",
        reason: "cursor_too_long",
        stage: "call",
        phase: "call",
        limits: { maxCursorChars: MAX_CURSOR_CHARS },
      });
      assert.equal(target.pages(), 1, "no page was asked for with the huge cursor");
      assert.ok(
        report.growthBytes < MAX_CURSOR_GROWTH_BYTES,
        `RSS grew ${(report.growthBytes / MiB).toFixed(1)} MiB; at most ${MAX_CURSOR_GROWTH_BYTES / MiB} MiB`,
      );
    });

    test(`S8: distinct short cursors still stop at the page cap, in the listing's phase (${name})`, async () => {
      const target = await make("short-cursors");
      const c = await client(target, { maxListPages: 5 });
      const error = await rejection(c.listResources());
      assert.equal(error.code, "limit");
      assert.equal(error.reason, "too_many_pages");
      assert.equal(error.phase, "call");
      assert.deepEqual(error.limits, { maxListPages: 5 });
      assert.equal(target.pages(), 5, "exactly the cap's pages were asked for");
    });

    test(`S8: a cursor handed back again is a loop, caught from the digests of the cursors seen (${name})`, async () => {
      const target = await make("loop-cursor");
      const c = await client(target);
      const error = await rejection(c.listResources());
      assert.equal(error.code, "protocol");
      assert.equal(error.reason, "cursor_loop");
      assert.equal(error.phase, "call");
      assert.equal(target.pages(), 4, "c1, c2, c3, then c1 again: the fourth page ends it");
      // The session is fine: the listing failed, not the connection.
      assert.deepEqual(await c.listPrompts(), [{ name: "p" }]);
    });
  });
}

// ---------------------------------------------------------------- nesting

const replyPaths = [
  { name: "stdio", make: (b: Behaviour) => Promise.resolve(stdioTarget(b)) },
  { name: "Streamable HTTP, JSON body", make: (b: Behaviour) => httpTarget(b, "json") },
  { name: "Streamable HTTP, SSE", make: (b: Behaviour) => httpTarget(b, "sse") },
] as const;

for (const { name, make } of replyPaths) {
  describe(`nesting (${name})`, () => {
    test(`S8 P8: a tools/call result nested 100,000 deep is a protocol error in phase call with effect done (${name})`, async () => {
      const target = await make("deep-call");
      const c = await client(target);
      const error = await rejection(c.callTool("echo", { text: "hi" }));
      assert.equal(error.code, "protocol");
      assert.equal(error.reason, "too_deep");
      assert.equal(error.stage, "call");
      assert.equal(error.phase, "call");
      assert.equal(error.effect, "done", "the result arrived: the tool ran");
      assert.deepEqual(error.limits, { maxJsonDepth: MAX_JSON_DEPTH });
      // The record a host hands on is the same, and serialising it is safe.
      assert.equal(JSON.parse(JSON.stringify(error)).code, "protocol");
      // The stream stayed in step: the session is open and answers the next request.
      assert.equal(c.state, "open");
      assert.deepEqual(await c.listPrompts(), [{ name: "p" }]);
    });

    test(`S8 X4: a tools/list reply nested 100,000 deep during establishment is a protocol error in discovery (${name})`, async () => {
      const target = await make("deep-list");
      const error = await rejection(connect({ ...base, ...target.options, prefetchTools: true }));
      assert.equal(error.code, "protocol");
      assert.equal(error.reason, "too_deep");
      assert.equal(error.stage, "list_tools");
      assert.equal(error.phase, "discovery");
      assert.equal(error.effect, "none", "listing has no effect to speak of");
    });
  });
}

describe("nesting: errors and notifications", () => {
  test("S8 P8: a JSON-RPC error nested 100,000 deep leaves the call's effect unknown, still a protocol error", async () => {
    const c = await client(stdioTarget("deep-error"));
    const error = await rejection(c.callTool("echo", { text: "hi" }));
    assert.equal(error.code, "protocol");
    assert.equal(error.reason, "too_deep");
    assert.equal(error.phase, "call");
    assert.equal(error.effect, "unknown", "an error we could not read says nothing of whether the tool ran");
  });

  test("S8 P6: a notification nested 100,000 deep on a shared stream (stdio) is dropped; the call it preceded succeeds", async () => {
    const c = await client(stdioTarget("deep-notify"));
    const result = await c.callTool("echo", { text: "after the deep one" });
    assert.deepEqual(result.content, [{ type: "text", text: "after the deep one" }]);
    assert.equal(c.state, "open", "the stream is still in step: nothing to close it for");
  });

  test("S8 P8: over the legacy HTTP+SSE stream (shared) a 100,000-deep result fails its call (effect done) and the stream goes on", async () => {
    const state = bounds.newState();
    const deepAnswer = (rec: Recorded) => bounds.answerText(rec.body, "deep-call", state)[0];
    const server = await startHttp(legacySseHandler({ overrides: { "tools/call": deepAnswer } }), {
      path: "/sse",
    });
    toClose.push(() => server.close());
    const c = await connect({ url: server.url, transport: "sse", eraHints: false, listen: false });
    toClose.push(() => c.close());
    const error = await rejection(c.callTool("echo", { text: "hi" }));
    assert.equal(error.code, "protocol");
    assert.equal(error.reason, "too_deep");
    assert.equal(error.phase, "call");
    assert.equal(error.effect, "done");
    assert.equal(c.state, "open");
    assert.equal((await c.listTools()).length, 1, "the next request on the stream is answered");
  });

  test("S8: a notification nested 100,000 deep on a call's own SSE reply stream fails that call like any unreadable event (effect unknown)", async () => {
    const c = await client(await httpTarget("deep-notify", "sse"));
    const error = await rejection(c.callTool("echo", { text: "hi" }));
    assert.equal(error.code, "protocol");
    assert.equal(error.reason, "too_deep");
    assert.equal(error.phase, "call");
    assert.equal(error.effect, "unknown");
  });
});

// ---------------------------------------------------------------- the CLI

describe("nesting through the built CLI", () => {
  for (const { name, make } of [replyPaths[0], replyPaths[1]]) {
    test(`S8 K1: tether call against a 100,000-deep result exits 3 with one protocol record (${name})`, async () => {
      const target = await make("deep-call");
      const run = await runCli(cliArgs(target, ["--protocol-version", "2025-06-18"]), { timeoutMs: 30_000 });
      assert.equal(run.code, 3, `exit status; stderr: ${run.stderr}`);
      assert.equal(run.stdout, "", "nothing partial on stdout");
      assert.equal(run.stderr.trim().split("\n").length, 1, "exactly one line on stderr");
      const record = errorRecord(run);
      assert.equal(record.code, "protocol");
      assert.equal(record.reason, "too_deep");
      assert.equal(record.stage, "call");
      assert.equal(record.phase, "call");
      assert.equal(record.effect, "done");
    });
  }
});

/** `tether call` arguments for a target: `<url> echo [options]`, or `echo [options] -- <command>` for stdio. */
function cliArgs(target: Target, options: string[]): string[] {
  const [first, ...rest] = target.cliTarget;
  return first === "--" ? ["call", "echo", ...options, "--", ...rest] : ["call", first!, "echo", ...options];
}
