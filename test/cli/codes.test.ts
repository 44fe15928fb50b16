// The CLI's error codes that test/cli/cli.test.ts leaves out (CLI.md "Codes and exit statuses";
// CONTRACT K1, K2, X2): protocol, remote_error, limit from a stdio line, cancelled by SIGTERM, a
// discovery timeout while listing tools, and --debug. Every failure must give its exit status,
// exactly one stderr line that is the whole error record, nothing on stdout, and no canary: one
// is planted in a header, one in the URL query (or a stdio server's environment), and the
// scripted servers echo what they received back in their error text and bodies.
//
// `internal` has no test: it is what a bug in tether becomes, and no server behaviour forces one.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { stdioServer } from "../fixtures/budgets/servers.ts";
import { type CliRun, runCli } from "../helpers/cli.ts";
import {
  type Handler,
  type HostileServer,
  hang,
  json,
  legacyStreamableHandler,
  type Recorded,
  rpcError,
  rpcResult,
  type StdioScript,
  startHttp,
  startStdioScript,
} from "../helpers/hostile.ts";

const HEADER_CANARY = "hdr-CANARY-7e21c9a04b";
const QUERY_CANARY = "qry-CANARY-3f90d1b6c8";
const ENV_CANARY = "env-CANARY-a4c85e2d17";
/** Every canary shares this, so one search finds any of them, whole or in part. */
const CANARY = "CANARY";

const ALWAYS = ["type", "code", "reason", "stage", "phase", "message", "attempt"] as const;

const servers: HostileServer[] = [];
const scripts: StdioScript[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const s of scripts) s.dispose();
});

async function http(handler: Handler): Promise<HostileServer> {
  const s = await startHttp(handler);
  servers.push(s);
  return s;
}

/** What a server echoes back: the path with its query, and every header it received. */
const echo = (rec: Recorded) => `${rec.path} ${JSON.stringify(rec.headers)}`;

/** The target and flags that plant the header and query canaries. */
function withCanaries(s: HostileServer): { url: string; flags: string[] } {
  return { url: `${s.url}?key=${QUERY_CANARY}`, flags: ["-H", `X-Api-Key: ${HEADER_CANARY}`] };
}

/** K1: the exit status, one stderr line that is the whole record, nothing on stdout, no canary. */
function assertRecord(run: CliRun, code: string, exit: number): Record<string, unknown> {
  assert.equal(run.stdout, "", "nothing on stdout");
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `exactly one stderr line, got: ${run.stderr}`);
  assert.ok(run.stderr.endsWith("\n"), "the record is a whole line");
  const record = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(record.type, "error");
  assert.equal(record.code, code, run.stderr);
  assert.equal(run.code, exit, `exit status for ${code}`);
  for (const field of ALWAYS) assert.ok(field in record, `the record has ${field}`);
  for (const field of ["reason", "stage", "phase", "message"] as const)
    assert.equal(typeof record[field], "string", `${field} is a string`);
  assert.equal(typeof record.attempt, "number");
  assert.ok(!run.stderr.includes(CANARY), `no canary in stderr: ${run.stderr}`);
  assert.doesNotMatch(run.stderr, /\bat .+:\d+:\d+/, "no stack trace");
  return record;
}

// Every test starts its own server and CLI process: the groups run side by side.
describe("exit codes", { concurrency: true }, () => {
  describe("K1: protocol (exit 3)", () => {
    test("K1: a garbage JSON reply to tools/call is protocol, exit 3, and none of the body is shown", async () => {
      const s = await http(
        legacyStreamableHandler({
          "tools/call": (res, rec) => {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(`{"jsonrpc":"2.0","id":${String(rec.rpcId)},"result": <<garbage>> ${echo(rec)}`);
          },
        }),
      );
      const { url, flags } = withCanaries(s);
      const run = await runCli(["call", url, "echo", "text=hi", ...flags]);
      const record = assertRecord(run, "protocol", 3);
      assert.equal(record.reason, "invalid_json");
      assert.equal(record.stage, "call");
      assert.equal(record.phase, "call");
      assert.doesNotMatch(run.stderr, /garbage/);
    });

    test("K1: a server offering a version we do not know is protocol/version_mismatch, exit 3, its echoed text redacted", async () => {
      const s = await http(
        legacyStreamableHandler({
          initialize: json(200, (rec) =>
            rpcResult(rec.rpcId, {
              protocolVersion: `v-${String(rec.headers["x-api-key"])}`,
              capabilities: { tools: {} },
              serverInfo: { name: echo(rec), version: "0" },
            }),
          ),
        }),
      );
      const { url, flags } = withCanaries(s);
      const run = await runCli(["tools", url, ...flags]);
      const record = assertRecord(run, "protocol", 3);
      assert.equal(record.reason, "version_mismatch");
      assert.equal(record.phase, "discovery");
      // The message names what the server offered, with the secret it echoed taken out.
      assert.match(String(record.message), /\[redacted\]/);
    });
  });

  describe("K1: remote_error (exit 7)", () => {
    test("K1: a JSON-RPC error to tools/call is remote_error, exit 7, with rpcCode and a truncated, redacted rpcMessage", async () => {
      const s = await http(
        legacyStreamableHandler({
          "tools/call": json(200, (rec) =>
            rpcError(rec.rpcId, -32042, `denied ${echo(rec)} ${"z".repeat(3_000)}`),
          ),
        }),
      );
      const { url, flags } = withCanaries(s);
      const run = await runCli(["call", url, "echo", "text=hi", ...flags]);
      const record = assertRecord(run, "remote_error", 7);
      assert.equal(record.rpcCode, -32042);
      assert.equal(record.stage, "call");
      assert.equal(typeof record.rpcMessage, "string");
      const rpcMessage = String(record.rpcMessage);
      assert.ok(rpcMessage.startsWith("denied "), rpcMessage);
      assert.ok(rpcMessage.length <= 301, `rpcMessage is truncated (${rpcMessage.length} characters)`);
      assert.ok(rpcMessage.endsWith("…"), "and says so");
      assert.match(rpcMessage, /\[redacted\]/, "the echoed secrets are redacted, not just cut off");
      assert.ok(!String(record.message).includes("denied"), "the server's text stays out of message");
    });
  });

  describe("K1: limit (exit 5)", () => {
    test("K1: a stdio line longer than the byte ceiling is limit, exit 5, with observedBytes", async () => {
      const script = startStdioScript(
        stdioServer({
          call: `line(result(m.id, process.env.TETHER_SECRET + " " + "x".repeat(100000)));`,
        }),
      );
      scripts.push(script);
      const run = await runCli([
        "call",
        "echo",
        "--max-bytes",
        "20000",
        "--max-frame-bytes",
        "20000",
        "-e",
        `TETHER_SECRET=${ENV_CANARY}`,
        "--",
        script.command,
        ...script.args,
      ]);
      const record = assertRecord(run, "limit", 5);
      assert.equal(record.reason, "frame_too_large");
      assert.equal(record.phase, "call");
      assert.ok(Number(record.observedBytes) > 20_000, `observedBytes ${String(record.observedBytes)}`);
      assert.equal(record.effect, "unknown");
    });
  });

  describe("K1: timeout and cancelled", () => {
    test("K1: `tools` against a server that never lists its tools is a discovery timeout, exit 4, not a cancellation", async () => {
      const s = await http(legacyStreamableHandler({ "tools/list": hang() }));
      const { url, flags } = withCanaries(s);
      // Long enough that a loaded machine still gets to tools/list before the deadline ends it.
      const run = await runCli(["tools", url, "--discovery-timeout", "2500", ...flags]);
      const record = assertRecord(run, "timeout", 4);
      assert.equal(record.reason, "deadline_exceeded");
      assert.equal(record.phase, "discovery");
      assert.equal(record.stage, "list_tools");
    });

    test("K1: SIGTERM during a call exits 130 with code cancelled", async () => {
      let callArrived!: () => void;
      const arrived = new Promise<void>((resolve) => {
        callArrived = resolve;
      });
      const s = await http(
        legacyStreamableHandler({
          "tools/call": () => {
            callArrived();
          },
        }),
      );
      const { url, flags } = withCanaries(s);
      // The call reached the server, so the CLI (which installs its handlers first) is mid-call.
      const run = await runCli(["call", url, "echo", "text=hi", ...flags], {
        signalWhen: { signal: "SIGTERM", ready: arrived },
      });
      const record = assertRecord(run, "cancelled", 130);
      assert.equal(record.stage, "call");
      assert.equal(record.phase, "call");
    });
  });

  describe("K2: --debug", () => {
    /** A header value fetch refuses, and whose refusal message quotes it in full. */
    const BAD_HEADER = `${HEADER_CANARY}\nsecond-line`;

    test("K2: --debug adds the causes, with a lower layer's message redacted and no stack trace", async () => {
      const s = await http(legacyStreamableHandler());
      const args = ["tools", `${s.url}?key=${QUERY_CANARY}`, "-H", `X-Api-Key: ${BAD_HEADER}`];
      const plain = await runCli(args);
      const plainRecord = assertRecord(plain, "connection", 3);
      assert.equal(plainRecord.debug, undefined, "no causes without --debug");

      const run = await runCli([...args, "--debug"]);
      const record = assertRecord(run, "connection", 3);
      assert.ok(Array.isArray(record.debug) && record.debug.length > 0, `causes: ${run.stderr}`);
      for (const cause of record.debug as Record<string, unknown>[]) {
        assert.equal(typeof cause.name, "string");
        assert.equal(typeof cause.message, "string");
        assert.equal(cause.stack, undefined);
      }
      // fetch's own message quoted the header value; it arrives with the value taken out.
      assert.match(JSON.stringify(record.debug), /\[redacted\]/);
    });

    test("K2: --debug on a remote_error keeps the one-line record, its rpcMessage, and no canary", async () => {
      const s = await http(
        legacyStreamableHandler({
          "tools/call": json(200, (rec) => rpcError(rec.rpcId, -32042, `denied ${echo(rec)}`)),
        }),
      );
      const { url, flags } = withCanaries(s);
      const run = await runCli(["call", url, "echo", "text=hi", "--debug", ...flags]);
      const record = assertRecord(run, "remote_error", 7);
      assert.ok(Array.isArray(record.debug), "causes are listed");
      assert.equal(record.rpcCode, -32042);
      assert.match(String(record.rpcMessage), /^denied /);
    });

    test("K2: internal (exit 8) is what a bug in tether becomes", {
      skip: "no server behaviour forces one",
    }, () => {});
  });
});
