// Qualification (CONTRACT Q1, K3): the installed package, not the source tree. Every scenario
// drives the library from the scratch install under Node and Bun, and the CLI under Node, Bun
// and as the compiled binary, against loopback servers written here. Run by `npm run qualify`,
// which prepares QUALIFY_APP (the install), QUALIFY_BUN and QUALIFY_BINARY.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  replyOfBytes,
  scriptedLegacySse,
  sseReplyOfBytes,
  stdioServer,
  writeSplit,
} from "../fixtures/budgets/servers.ts";
import { type CliRun, runProcess } from "../helpers/cli.ts";
import {
  destroy,
  type HostileServer,
  hang,
  legacyStreamableHandler,
  openSse,
  startHttp,
  startStdioScript,
} from "../helpers/hostile.ts";

const APP = process.env.QUALIFY_APP;
const BUN = process.env.QUALIFY_BUN;
const BINARY = process.env.QUALIFY_BINARY;
if (!APP || !BUN || !BINARY)
  throw new Error("run through `npm run qualify`, which prepares the install and the binary");
const BIN_JS = join(APP, "node_modules", "mcp-tether", "dist", "tether.mjs");

const CANARIES = ["qual-TOKEN-5f1c9e", "qual-QUERY-77ab20", "qual-HEADER-c0ffee"];

type Outcome = CliRun;

/** Runs a command of the install (in its folder), Ctrl-C once `sigintWhen` resolves. */
function exec(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; sigintWhen?: Promise<unknown> } = {},
): Promise<Outcome> {
  // Ctrl-C once the event the caller names has happened (the request reached the server), so
  // the signal never lands before the CLI is listening for it, however slow its start.
  return runProcess(cmd, args, {
    cwd: APP,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    timeoutMs: 30_000,
    name: `${cmd} ${args.join(" ")}`,
    signalWhen: opts.sigintWhen ? { signal: "SIGINT", ready: opts.sigintWhen } : undefined,
  });
}

type LibRuntime = "node" | "bun";
type CliRuntime = "node" | "bun" | "binary";

interface LibResult {
  ok: boolean;
  error?: Record<string, unknown>;
  result?: { content?: { text?: string }[] };
  elapsedMs: number;
}

async function lib(runtime: LibRuntime, plan: Record<string, unknown>): Promise<LibResult> {
  const r = await exec(runtime === "node" ? process.execPath : BUN!, [
    join(APP!, "driver.mjs"),
    JSON.stringify(plan),
  ]);
  const last = r.stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last) as LibResult;
  } catch {
    throw new Error(`driver printed no outcome (exit ${r.code}): ${r.stderr.slice(-800)}`);
  }
}

function cli(
  runtime: CliRuntime,
  args: string[],
  opts: { env?: Record<string, string>; sigintWhen?: Promise<unknown> } = {},
) {
  if (runtime === "binary") return exec(BINARY!, args, opts);
  return exec(runtime === "node" ? process.execPath : BUN!, [BIN_JS, ...args], opts);
}

/** K1 on any runtime: one stderr line that parses as the record, nothing on stdout, no canary. */
function record(r: Outcome): Record<string, unknown> {
  assert.equal(r.stdout, "", `nothing on stdout: ${r.stdout.slice(0, 200)}`);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one stderr line: ${r.stderr.slice(0, 400)}`);
  for (const c of CANARIES) assert.ok(!r.stderr.includes(c), `canary ${c} leaked`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

const servers: { close(): Promise<void> | void }[] = [];
after(async () => {
  for (const s of servers) await s.close();
});
async function http(handler: Parameters<typeof startHttp>[0]): Promise<HostileServer> {
  const s = await startHttp(handler);
  servers.push(s);
  return s;
}

const N = 4_000;
const LIB_RUNTIMES: LibRuntime[] = ["node", "bun"];
const CLI_RUNTIMES: CliRuntime[] = ["node", "bun", "binary"];

describe("Q1: qualification from the packed package, the same under Node, Bun and the compiled binary (K3)", async () => {
  // ---- servers shared by the scenarios ----
  const slowInit = await http(legacyStreamableHandler({ initialize: hang() }));
  const slowCall = await http(legacyStreamableHandler({ "tools/call": hang() }));
  const jsonExact = await http(
    legacyStreamableHandler({
      "tools/call": async (res, rec) => {
        res.writeHead(200, { "content-type": "application/json" });
        await writeSplit(res, replyOfBytes(rec.rpcId, N));
        res.end();
      },
    }),
  );
  const sseExact = await http(
    legacyStreamableHandler({
      "tools/call": async (res, rec) => {
        openSse(res);
        await writeSplit(res, sseReplyOfBytes(rec.rpcId, N));
        res.end();
      },
    }),
  );
  const legacySse = await scriptedLegacySse(async (rec, stream) => {
    if (rec.rpcMethod !== "tools/call") return false;
    await writeSplit(stream, sseReplyOfBytes(rec.rpcId, N));
    return true;
  });
  servers.push(legacySse);
  const stdio = startStdioScript(stdioServer({ call: `await splitLine(exactResult(m.id, ${N}));` }));
  servers.push({ close: () => stdio.dispose() });
  const endsEarly = await http(
    legacyStreamableHandler({
      "tools/call": (res) => {
        openSse(res);
        res.write(": nothing for you\n\n");
        res.end();
      },
    }),
  );
  const resets = await http(legacyStreamableHandler({ "tools/call": destroy() }));
  const echoes401 = await http((res, rec) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: `denied ${rec.path} ${JSON.stringify(rec.headers)}` },
      }),
    );
  });

  const exactTargets: { path: string; options: Record<string, unknown>; cli: string[] }[] = [
    { path: "JSON body", options: { url: jsonExact.url }, cli: [jsonExact.url] },
    { path: "Streamable HTTP SSE", options: { url: sseExact.url }, cli: [sseExact.url] },
    {
      path: "legacy HTTP+SSE",
      options: { url: legacySse.url, transport: "sse" },
      cli: [legacySse.url, "--transport", "sse"],
    },
    {
      path: "stdio line",
      options: { command: stdio.command, args: stdio.args },
      cli: ["--", stdio.command, ...stdio.args],
    },
  ];

  for (const runtime of LIB_RUNTIMES) {
    describe(`library under ${runtime}`, () => {
      test("opposite phase overrides: a tiny discovery budget fails discovery; a tiny call budget fails the call", async () => {
        const d = await lib(runtime, {
          options: { url: slowInit.url, discovery: { timeoutMs: 300 }, call: { timeoutMs: 20_000 } },
          call: { name: "echo" },
        });
        assert.equal(d.error?.code, "timeout");
        assert.equal(d.error?.phase, "discovery");
        const c = await lib(runtime, {
          options: { url: slowCall.url, discovery: { timeoutMs: 20_000 }, call: { timeoutMs: 300 } },
          call: { name: "echo" },
        });
        assert.equal(c.error?.code, "timeout");
        assert.equal(c.error?.phase, "call");
        assert.equal(c.error?.effect, "unknown");
      });

      for (const t of exactTargets) {
        test(`exact byte boundary, ${t.path}: N passes with ceiling N, N-1 refuses it`, async () => {
          const ok = await lib(runtime, {
            options: { ...t.options, call: { maxResponseBytes: N } },
            call: { name: "echo" },
          });
          assert.equal(ok.ok, true, JSON.stringify(ok.error));
          const over = await lib(runtime, {
            options: { ...t.options, call: { maxResponseBytes: N - 1 } },
            call: { name: "echo" },
          });
          assert.equal(over.error?.code, "limit", JSON.stringify(over.error));
          assert.ok(
            typeof over.error?.observedBytes === "number" && (over.error.observedBytes as number) >= N,
          );
        });
      }

      test("caller abort is cancelled, distinct from a timeout", async () => {
        const r = await lib(runtime, {
          options: { url: slowCall.url },
          call: { name: "echo" },
          abortAfterMs: 500,
        });
        assert.equal(r.error?.code, "cancelled");
      });

      test("missing responses: a reply stream that ends without the reply fails at once; silence times out", async () => {
        const early = await lib(runtime, {
          options: { url: endsEarly.url, call: { timeoutMs: 20_000 } },
          call: { name: "echo" },
        });
        assert.equal(early.error?.code, "connection");
        assert.ok(early.elapsedMs < 10_000);
        const silent = await lib(runtime, {
          options: { url: slowCall.url, call: { timeoutMs: 400 } },
          call: { name: "echo" },
        });
        assert.equal(silent.error?.code, "timeout");
      });

      test("credential canaries: header, query and token never appear, even when a 401 echoes them", async () => {
        const r = await lib(runtime, {
          options: {
            url: `${echoes401.url}?key=${CANARIES[1]}`,
            headers: { authorization: `Bearer ${CANARIES[0]}`, "x-extra": CANARIES[2] },
          },
        });
        assert.equal(r.error?.code, "unauthorized");
        for (const c of CANARIES) assert.ok(!JSON.stringify(r).includes(c));
      });

      test("forbidden replay: a tools/call whose connection breaks is sent exactly once", async () => {
        const before = resets.requests.filter((q) => q.rpcMethod === "tools/call").length;
        const r = await lib(runtime, { options: { url: resets.url }, call: { name: "echo" } });
        assert.equal(r.error?.code, "connection");
        assert.equal(resets.requests.filter((q) => q.rpcMethod === "tools/call").length - before, 1);
      });
    });
  }

  for (const runtime of CLI_RUNTIMES) {
    describe(`CLI under ${runtime}`, () => {
      test("K3: --version and a successful tools listing", async () => {
        const v = await cli(runtime, ["--version"]);
        assert.equal(v.code, 0);
        assert.match(v.stdout, /^\d+\.\d+\.\d+/);
        const t = await cli(runtime, ["tools", jsonExact.url, "--json"]);
        assert.equal(t.code, 0, t.stderr);
        assert.deepEqual(
          (JSON.parse(t.stdout) as { tools: { name: string }[] }).tools.map((x) => x.name),
          ["echo"],
        );
      });

      test("opposite phase overrides", async () => {
        const d = record(
          await cli(runtime, [
            "call",
            slowInit.url,
            "echo",
            "text=hi",
            "--discovery-timeout",
            "300",
            "--call-timeout",
            "20000",
          ]),
        );
        assert.deepEqual([d.code, d.phase], ["timeout", "discovery"]);
        const c = record(
          await cli(runtime, [
            "call",
            slowCall.url,
            "echo",
            "text=hi",
            "--discovery-timeout",
            "20000",
            "--call-timeout",
            "300",
          ]),
        );
        assert.deepEqual([c.code, c.phase, c.effect], ["timeout", "call", "unknown"]);
      });

      for (const t of exactTargets) {
        test(`exact byte boundary, ${t.path}`, async () => {
          const head = t.cli[0] === "--" ? [] : [t.cli[0]!];
          const tail = t.cli[0] === "--" ? t.cli : t.cli.slice(1);
          const ok = await cli(runtime, [
            "call",
            ...head,
            "echo",
            "text=hi",
            "--call-max-bytes",
            String(N),
            ...tail,
          ]);
          assert.equal(ok.code, 0, ok.stderr);
          const over = await cli(runtime, [
            "call",
            ...head,
            "echo",
            "text=hi",
            "--call-max-bytes",
            String(N - 1),
            ...tail,
          ]);
          assert.equal(over.code, 5);
          const r = record(over);
          assert.equal(r.code, "limit");
          assert.ok((r.observedBytes as number) >= N);
        });
      }

      test("caller abort: SIGINT exits 130 with code cancelled", async () => {
        let arrived!: () => void;
        const called = new Promise<void>((resolve) => {
          arrived = resolve;
        });
        // The call hangs, as slowCall's does, and says when it has arrived.
        const hangs = await http(legacyStreamableHandler({ "tools/call": () => arrived() }));
        const r = await cli(runtime, ["call", hangs.url, "echo", "text=hi"], { sigintWhen: called });
        assert.equal(r.code, 130, r.stderr);
        assert.equal(record(r).code, "cancelled");
      });

      test("missing responses", async () => {
        const early = await cli(runtime, ["call", endsEarly.url, "echo", "text=hi"]);
        assert.equal(early.code, 3);
        assert.equal(record(early).code, "connection");
        const silent = await cli(runtime, ["call", slowCall.url, "echo", "text=hi", "--call-timeout", "400"]);
        assert.equal(silent.code, 4);
      });

      test("credential canaries through --bearer-env, -H and the URL query", async () => {
        const r = await cli(
          runtime,
          [
            "tools",
            `${echoes401.url}?key=${CANARIES[1]}`,
            "--bearer-env",
            "QUAL_TOKEN",
            "-H",
            `X-Extra: ${CANARIES[2]}`,
          ],
          {
            env: { QUAL_TOKEN: CANARIES[0]! },
          },
        );
        assert.equal(r.code, 6);
        assert.equal(record(r).code, "unauthorized");
      });

      test("K3: a session starts, carries a call and stops", async () => {
        // A runtime folder of its own: its own session process, which ends with the session.
        const env = { XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), "tether-qualify-run-")) };
        try {
          const started = await cli(runtime, ["session", "start", "q", "--", stdio.command, ...stdio.args], {
            env,
          });
          assert.equal(started.code, 0, started.stderr);
          const call = await cli(runtime, ["call", "@q", "echo", "text=hi"], { env });
          assert.equal(call.code, 0, call.stderr);
          const stopped = await cli(runtime, ["session", "stop", "q"], { env });
          assert.equal(stopped.code, 0, stopped.stderr);
        } finally {
          await cli(runtime, ["session", "stop", "q"], { env });
          rmSync(env.XDG_RUNTIME_DIR, { recursive: true, force: true });
        }
      });

      test("forbidden replay", async () => {
        const before = resets.requests.filter((q) => q.rpcMethod === "tools/call").length;
        const r = await cli(runtime, ["call", resets.url, "echo", "text=hi"]);
        assert.equal(r.code, 3);
        assert.equal(resets.requests.filter((q) => q.rpcMethod === "tools/call").length - before, 1);
      });
    });
  }
});
