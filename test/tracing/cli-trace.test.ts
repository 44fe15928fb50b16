// `tether ... --trace` through the built CLI: on a terminal (a pseudo-terminal, `script`) the
// command's spans as a waterfall on stderr after its output, as wide as the terminal at most;
// off a terminal stdout and stderr exactly as without the flag; and with OTEL_EXPORTER_OTLP_ENDPOINT
// the spans exported over OTLP/HTTP to a loopback receiver, one trace that the server's requests
// joined, with no secret in it.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertNoLeak, CANARIES } from "../helpers/canaries.ts";
import { CLI_BIN, runCli } from "../helpers/cli.ts";

const META_SERVER = fileURLToPath(new URL("../fixtures/tracing/meta-server.mjs", import.meta.url));
/** The meta server over stdio, holding the env canary (which its error text carries). */
const SERVER = ["-e", `TETHER_ECHO_KEY=${CANARIES.env}`, "--", process.execPath, META_SERVER, "stdio"];
const ESC = String.fromCharCode(27);

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** The CLI on a pseudo-terminal `columns` wide; the transcript without CRs, colour or the stage line. */
function inTerminal(args: string[], columns: number): string {
  const quoted = [process.execPath, CLI_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const out = execFileSync("script", ["-qc", `stty cols ${columns}; env NO_COLOR=1 ${quoted}`, "/dev/null"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  const erase = new RegExp(`${ESC}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
  return out.replace(/\r/g, "").replace(erase, "");
}

test("on a terminal, --trace draws the command's spans as a waterfall after its output, within the terminal's width", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal(["call", "meta", `text=${CANARIES.bearer}`, "--fresh", "--trace", ...SERVER], 90);
  const lines = out.split("\n");
  const start = lines.findIndex((l) => /^trace [0-9a-f]{32}$/.test(l));
  assert.ok(start > 0, `the waterfall follows the output:\n${out}`);
  assert.match(lines[0]!, /"received"/, "the tool's output comes first");
  const rows = lines.slice(start + 1).filter((l) => l !== "");
  assert.match(rows[0]!, /^stage\s+start\s+duration\s+outcome/);
  const names = rows.slice(1).map((r) => /^( *\S+(?: \S+)?)\s+\d/.exec(r)?.[1]);
  assert.deepEqual(names, [
    "tether call",
    "  connect",
    "    attempt 1",
    "      spawn",
    "      probe",
    "      initialize",
    "      initialized",
    "  tools/list",
    "  tools/call meta",
  ]);
  for (const row of rows.slice(1)) {
    assert.match(row, /\d ms\s+\S+\s+\|[ █]+\|$/, `stage, start, duration, outcome and a bar: ${row}`);
    assert.ok([...row].length <= 90, `within 90 columns (${[...row].length}): ${row}`);
  }
  assert.match(rows.find((r) => r.startsWith("  tools/call meta"))!, /\bok\s+\|/);
  // The bars are on one time line: the call's starts after the establishment's.
  const barStart = (r: string) => r.indexOf("█") - r.indexOf("|");
  assert.ok(barStart(rows.at(-1)!) > barStart(rows[2]!), "the call's bar starts right of the connect's");
  assertNoLeak(out, "the waterfall");
});

test("a failure's row says its public code, and the command's row the command's", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal(["call", "fail", "--trace", ...SERVER], 120);
  const rows = out.split("\n");
  assert.match(rows.find((r) => r.startsWith("tether call"))!, /\bremote_error\s+\|/);
  assert.match(rows.find((r) => r.startsWith("  tools/call fail"))!, /\bremote_error\s+\|/);
  assertNoLeak(out.slice(out.indexOf("\ntrace ")), "the waterfall");
});

test("off a terminal --trace changes nothing the command prints: stdout and stderr are those without it", async () => {
  const plain = await runCli(["call", "meta", ...SERVER]);
  const traced = await runCli(["call", "meta", "--trace", ...SERVER]);
  assert.equal(traced.code, 0);
  assert.equal(traced.stderr, plain.stderr);
  assert.equal(traced.stderr, "");
  assert.match(traced.stdout, /"received"/);
  const failedPlain = await runCli(["call", "fail", ...SERVER]);
  const failed = await runCli(["call", "fail", "--trace", ...SERVER]);
  assert.equal(failed.code, 7, "remote_error's status");
  assert.equal(failed.code, failedPlain.code);
  assert.equal(failed.stderr, failedPlain.stderr, "the one error record, as without --trace");
  assert.equal(failed.stderr.trim().split("\n").length, 1);
});

/** A loopback OTLP/HTTP receiver that keeps every body POSTed to /v1/traces; `status` 0 never answers. */
async function receiver(status = 200) {
  const bodies: { path: string; type: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      bodies.push({ path: req.url ?? "", type: req.headers["content-type"] ?? "", body });
      if (status !== 0) res.writeHead(status, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

test("with OTEL_EXPORTER_OTLP_ENDPOINT the spans arrive over OTLP/HTTP as one trace, the server's requests joined to it", async () => {
  const otlp = await receiver();
  try {
    const run = await runCli(["call", "meta", `text=${CANARIES.bearer}`, "--trace", ...SERVER], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "", "off a terminal nothing is printed, even while exporting");
    assert.ok(otlp.bodies.length > 0, "the receiver got the spans before the CLI exited");
    assert.ok(otlp.bodies.every((b) => b.path === "/v1/traces"));
    const spans = otlp.bodies.flatMap((b) =>
      (
        JSON.parse(b.body) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        }
      ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
    );
    const names = spans.map((s) => s.name);
    for (const name of ["tether call", "connect", "attempt", "spawn", "initialize", "tools/call meta"])
      assert.ok(names.includes(name), `${name} among ${names.join(", ")}`);
    const traceIds = new Set(spans.map((s) => s.traceId));
    assert.equal(traceIds.size, 1, "one trace");
    const call = spans.find((s) => s.name === "tools/call meta")!;
    const root = spans.find((s) => s.name === "tether call")!;
    assert.equal(call.parentSpanId, root.spanId, "the request is a child of the command");
    // The server saw the request's own span as its parent.
    const received = JSON.parse(run.stdout) as {
      received: { method: string; meta: { traceparent?: string } }[];
    };
    const sent = received.received.find((r) => r.method === "tools/call")?.meta.traceparent;
    assert.equal(sent, `00-${call.traceId}-${call.spanId}-01`);
    assertNoLeak(otlp.bodies.map((b) => b.body).join("\n"), "the exported spans");
  } finally {
    await otlp.close();
  }
});

test("a collector that refuses the spans fails nothing: the command's output and status stand", async () => {
  const otlp = await receiver(503);
  try {
    const run = await runCli(["call", "meta", "--trace", ...SERVER], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint },
    });
    assert.equal(run.code, 0);
    assert.match(run.stdout, /"received"/);
    assert.equal(run.stderr, "");
    assert.ok(otlp.bodies.length > 0, "the export was tried");
  } finally {
    await otlp.close();
  }
});

test("a collector that never answers cannot hold the CLI: the export is given a few seconds, then the command ends as it would", async () => {
  const otlp = await receiver(0);
  try {
    const run = await runCli(["call", "meta", "--trace", ...SERVER], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint },
      timeoutMs: 20_000,
    });
    assert.equal(run.code, 0);
    assert.match(run.stdout, /"received"/);
    assert.equal(run.stderr, "");
    assert.ok(otlp.bodies.length > 0, "the export was tried");
    assert.ok(run.elapsedMs < 12_000, `ended in ${Math.round(run.elapsedMs)} ms`);
  } finally {
    await otlp.close();
  }
});
