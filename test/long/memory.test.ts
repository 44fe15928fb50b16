// Memory under a flood (CONTRACT P5, P6): a 200 MB reply against a 1 MiB call ceiling costs the
// client a few MiB of resident memory, not 200 MB, and the reading stops early: the server sees
// the client hang up long before it could write everything. The client runs in a child process
// (test/fixtures/budgets/memory-child.ts) so the figure is its own; the server runs here.

import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Flood, flood } from "../fixtures/budgets/servers.ts";
import { type CliRun, runProcess } from "../helpers/cli.ts";
import { legacyStreamableHandler, startHttp } from "../helpers/hostile.ts";

const MiB = 1024 * 1024;
const FLOOD_BYTES = 200 * 1000 * 1000;
const CHUNK_BYTES = 64 * 1024;
const CALL_CEILING = 1 * MiB;
/** What the flood may add to the client's resident memory. */
const MAX_GROWTH_BYTES = 32 * MiB;
/** What the server may get written before it notices the client left. */
const MAX_WRITTEN_BYTES = 50 * 1000 * 1000;
const CHILD_LIMIT_MS = 20_000;

const CHILD = fileURLToPath(new URL("../fixtures/budgets/memory-child.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

type Outcome = { code?: string; reason?: string; observedBytes?: number | null; resolved?: true };

interface Report {
  baselineRss: number;
  peakRss: number;
  growthBytes: number;
  heapGrowthBytes: number;
  arrayBufferGrowthBytes: number;
  elapsedMs: number;
  warmUp: Outcome;
  outcome: Outcome;
}

function runChild(url: string): Promise<CliRun> {
  return runProcess(process.execPath, ["--expose-gc", "--import", "tsx", CHILD], {
    cwd: ROOT,
    env: { ...process.env, TETHER_URL: url, FLOOD_BYTES: String(FLOOD_BYTES) },
    timeoutMs: CHILD_LIMIT_MS,
    name: "the memory probe",
  });
}

test("P6: a 200 MB reply against a 1 MiB ceiling costs a few MiB of memory, and the reading stops early", async (t) => {
  let sent: Flood | undefined;
  const server = await startHttp(
    legacyStreamableHandler({
      "tools/call": (res, rec, req) => {
        if (rec.rpcParams?.name !== "flood") return legacyStreamableHandler()(res, rec, req);
        const bytes = Number((rec.rpcParams.arguments as { bytes?: unknown } | undefined)?.bytes);
        // No Content-Length: the size is only found by reading.
        res.writeHead(200, { "content-type": "application/json" });
        const f = flood(res, {
          prefix: `{"jsonrpc":"2.0","id":${JSON.stringify(rec.rpcId)},"result":{"content":[{"type":"text","text":"`,
          totalBytes: bytes,
          chunkBytes: CHUNK_BYTES,
        });
        if (bytes === FLOOD_BYTES) sent = f;
      },
    }),
  );
  try {
    const run = await runChild(server.url);
    assert.equal(run.code, 0, `the probe failed: ${run.stderr}`);
    const report = JSON.parse(run.stdout.trim()) as Report;
    await sent?.done;
    const written = sent?.written() ?? 0;
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    t.diagnostic(
      `resident memory grew ${mib(report.growthBytes)} (baseline ${mib(report.baselineRss)}, peak ${mib(report.peakRss)}; ` +
        `at the peak the heap grew ${mib(report.heapGrowthBytes)}, buffers ${mib(report.arrayBufferGrowthBytes)}); ` +
        `the server wrote ${mib(written)} of ${mib(FLOOD_BYTES)}; refused after ${Math.round(report.elapsedMs)} ms`,
    );

    assert.equal(report.warmUp.code, "limit", `warm-up: ${JSON.stringify(report.warmUp)}`);
    assert.equal(report.outcome.code, "limit", JSON.stringify(report.outcome));
    assert.equal(report.outcome.reason, "response_too_large");
    const observed = report.outcome.observedBytes ?? 0;
    assert.ok(
      observed > CALL_CEILING && observed <= CALL_CEILING + CHUNK_BYTES * 4,
      `observedBytes ${observed}: just past the ceiling, at most a few chunks more`,
    );
    assert.ok(
      report.growthBytes <= MAX_GROWTH_BYTES,
      `resident memory grew ${(report.growthBytes / MiB).toFixed(1)} MiB (at most ${MAX_GROWTH_BYTES / MiB})`,
    );
    assert.ok(sent?.hungUp(), "the client hung up before the end of the reply");
    assert.ok(written < MAX_WRITTEN_BYTES, `the server wrote ${written} bytes before the client left`);
  } finally {
    await server.close();
  }
});
