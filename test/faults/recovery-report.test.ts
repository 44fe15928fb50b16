// What recovery reports: the era the policy is told about a failed attempt (R3), and which
// failure is the primary one when a fatal failure stops recovery on a later attempt (C6).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { TetherError } from "../../src/errors/tether-error.ts";
import { type AttemptFailure, connect } from "../../src/index.ts";
import { runCli } from "../helpers/cli.ts";
import { askingRecovery } from "../helpers/failures.ts";
import {
  destroy,
  type HostileServer,
  hostileSet,
  json,
  legacyStreamableHandler,
  rpcResult,
} from "../helpers/hostile.ts";

const kept = hostileSet();
after(kept.closeAll);

/** A legacy server whose first `initialize` has its connection destroyed; `later` answers the rest. */
async function resetsFirstInitialize(later = legacyStreamableHandler()): Promise<HostileServer> {
  let initializes = 0;
  return kept.http((res, rec, req) => {
    if (rec.rpcMethod === "initialize" && ++initializes === 1) return destroy()(res, rec, req);
    return later(res, rec, req);
  });
}

test("R3: the recovery policy is told the era of the attempt that failed", async () => {
  const server = await resetsFirstInitialize();
  const told: AttemptFailure[] = [];
  const client = await connect({
    url: server.url,
    timeoutMs: 20_000,
    recovery: askingRecovery(2, (failure) => told.push(failure), true),
  });
  await client.close();
  assert.equal(told.length, 1);
  assert.equal(told[0]?.era, "legacy");
  assert.equal(told[0]?.mode, "streamable-http");
});

test("C6, R6: a version mismatch under a pin on a later attempt is the primary failure, not the earlier reset", async () => {
  const server = await resetsFirstInitialize(
    legacyStreamableHandler({
      // The second attempt's server speaks only an older version than the pin.
      initialize: (res, rec, req) =>
        json(
          200,
          rpcResult(rec.rpcId, {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "older", version: "0" },
          }),
        )(res, rec, req),
    }),
  );
  const failure = await connect({
    url: server.url,
    timeoutMs: 20_000,
    protocolVersion: "2025-11-25",
    recovery: { maxAttempts: 3, backoffMs: 1 },
  }).then(
    () => assert.fail("connect() should fail"),
    (error: unknown) => error,
  );
  assert.ok(failure instanceof TetherError);
  assert.equal(failure.code, "protocol");
  assert.equal(failure.reason, "version_mismatch");
  assert.equal(failure.attempt, 2);
  assert.equal(failure.attempts, 2);
  assert.deepEqual(
    failure.laterFailures.map((f) => f.code),
    ["connection"],
  );
  // Both attempts asked for the pinned version.
  const asked = server.requests
    .filter((r) => r.rpcMethod === "initialize")
    .map((r) => r.rpcParams?.protocolVersion);
  assert.deepEqual(asked, ["2025-11-25", "2025-11-25"]);
});

test("R1, N7: probe reports the attempts establishment took when --retry succeeded on a later one", async () => {
  const server = await resetsFirstInitialize();
  const cache = mkdtempSync(join(tmpdir(), "tether-probe-attempts-"));
  try {
    const run = await runCli(["probe", server.url, "--retry", "3", "--json"], {
      env: { TETHER_CACHE_DIR: cache },
    });
    assert.equal(run.code, 0, run.stderr);
    const [row] = (JSON.parse(run.stdout) as { results: { outcome: string; attempts: number }[] }).results;
    assert.equal(row?.outcome, "ok");
    assert.equal(row?.attempts, 2);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
