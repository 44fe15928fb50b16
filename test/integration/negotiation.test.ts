// Version negotiation against real servers (the example fleet, plus the modern servers started
// with --modern-only): ceilings, pins and their conflicts, over HTTP, stdio and the CLI.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ConnectOptions, connect, type LifecycleEvent, TetherError } from "../../src/index.ts";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { type ExampleServer, startExampleServer } from "../helpers/hostile.ts";

const TIMEOUT_MS = 8_000;
const MODERN_STDIO = new URL("../../examples/servers/modern-stdio.mjs", import.meta.url).pathname;

const fleet = useFleet(["modern-2026-07-28", "streamable-2025-06-18"]);

let modernOnly: ExampleServer | undefined;
before(async () => {
  modernOnly = await startExampleServer("modern-2026-07-28.mjs", ["--modern-only"]);
});
after(async () => {
  await modernOnly?.close();
});

interface Run {
  events: LifecycleEvent[];
  stagesStarted: string[];
}

/** Connects cold (no remembered era), records events, and closes whatever it got. */
async function negotiate(
  options: ConnectOptions,
): Promise<Run & { era?: string; protocolVersion?: string; transportMode?: string; error?: unknown }> {
  const events: LifecycleEvent[] = [];
  const run = () => ({
    events,
    stagesStarted: events.flatMap((e) => (e.type === "stage_start" ? [e.stage] : [])),
  });
  try {
    const client = await connect({
      timeoutMs: TIMEOUT_MS,
      eraHints: false,
      ...options,
      onEvent: (e) => events.push(e),
    });
    const { era, protocolVersion, transportMode } = client;
    const tools = await client.listTools();
    assert.ok(tools.length > 0, "the negotiated session works");
    await client.close();
    return { ...run(), era, protocolVersion, transportMode };
  } catch (error) {
    return { ...run(), error };
  }
}

function assertFailure(error: unknown, code: string, reason?: string): TetherError {
  assert.ok(error instanceof TetherError, `expected a TetherError, got ${String(error)}`);
  assert.equal(error.code, code, `${error.code}/${error.reason}: ${error.message}`);
  if (reason !== undefined) assert.equal(error.reason, reason, error.message);
  return error;
}

describe("ceilings and pins over Streamable HTTP", () => {
  test("N4: a 2025-11-25 ceiling on the dual-era modern server negotiates 2025-11-25 without sending server/discover", async () => {
    const r = await negotiate({
      url: fleet().http("modern-2026-07-28").url,
      maxProtocolVersion: "2025-11-25",
    });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.era, "legacy");
    assert.equal(r.protocolVersion, "2025-11-25");
    assert.equal(r.transportMode, "streamable-http");
    assert.equal(r.stagesStarted.includes("probe"), false, `stages: ${r.stagesStarted.join(", ")}`);
    assert.ok(r.stagesStarted.includes("initialize"));
  });

  test("N4: a 2025-11-25 ceiling on a server that speaks up to 2025-06-18 negotiates 2025-06-18", async () => {
    const r = await negotiate({
      url: fleet().http("streamable-2025-06-18").url,
      maxProtocolVersion: "2025-11-25",
    });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.era, "legacy");
    assert.equal(r.protocolVersion, "2025-06-18");
    assert.equal(r.stagesStarted.includes("probe"), false);
  });

  test("N4: a 2025-11-25 ceiling on a modern-only server fails with code protocol (no version in common)", async () => {
    const r = await negotiate({ url: modernOnly!.url, maxProtocolVersion: "2025-11-25" });
    const error = assertFailure(r.error, "protocol", "version_mismatch");
    assert.match(error.message, /2026-07-28/, "names what the server offered");
    assert.equal(r.stagesStarted.includes("probe"), false, "never asks above the ceiling");
  });

  test("N5: the modern-only server in auto mode negotiates 2026-07-28", async () => {
    const r = await negotiate({ url: modernOnly!.url });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.era, "modern");
    assert.equal(r.protocolVersion, "2026-07-28");
  });

  test("N3: a 2025-11-25 pin on the 2025-06-18 server fails version_mismatch naming the offer", async () => {
    const r = await negotiate({
      url: fleet().http("streamable-2025-06-18").url,
      protocolVersion: "2025-11-25",
    });
    const error = assertFailure(r.error, "protocol", "version_mismatch");
    assert.match(error.message, /2025-06-18/);
  });

  test("N3: a 2025-06-18 pin on the 2025-06-18 server negotiates it", async () => {
    const r = await negotiate({
      url: fleet().http("streamable-2025-06-18").url,
      protocolVersion: "2025-06-18",
    });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.protocolVersion, "2025-06-18");
  });
});

describe("ceilings over stdio", () => {
  test("N4: a 2025-11-25 ceiling on the dual-era modern stdio server negotiates 2025-11-25 (legacy), no probe", async () => {
    const r = await negotiate({
      command: process.execPath,
      args: [MODERN_STDIO],
      maxProtocolVersion: "2025-11-25",
    });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.era, "legacy");
    assert.equal(r.protocolVersion, "2025-11-25");
    assert.equal(r.transportMode, "stdio");
    assert.equal(r.stagesStarted.includes("probe"), false);
    assert.equal(r.stagesStarted.filter((s) => s === "spawn").length, 1, "one process");
  });

  test("N4: a 2025-11-25 ceiling on the modern-only stdio server fails with code protocol", async () => {
    const r = await negotiate({
      command: process.execPath,
      args: [MODERN_STDIO, "--modern-only"],
      maxProtocolVersion: "2025-11-25",
    });
    assertFailure(r.error, "protocol", "version_mismatch");
  });

  test("N5: the modern stdio server in auto mode negotiates 2026-07-28 on one process", async () => {
    // A generous probe limit: on a loaded machine the server may take longer than the default to
    // answer, and a silent probe rightly settles on legacy (the limit has fake-clock tests).
    const r = await negotiate({
      command: process.execPath,
      args: [MODERN_STDIO],
      probeTimeoutMs: 30_000,
      timeoutMs: 40_000,
    });
    assert.equal(r.error, undefined, String(r.error));
    assert.equal(r.era, "modern");
    assert.equal(r.protocolVersion, "2026-07-28");
    assert.equal(r.stagesStarted.filter((s) => s === "spawn").length, 1);
  });
});

describe("the CLI", () => {
  test("N2: --protocol-version with --max-protocol-version exits 2 (HTTP target)", async () => {
    const url = fleet().http("streamable-2025-06-18").url;
    const run = await runCli([
      "tools",
      url,
      "--protocol-version",
      "2025-06-18",
      "--max-protocol-version",
      "2025-11-25",
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, "");
    assert.equal(errorRecord(run).code, "config");
  });

  test("N2: --protocol-version with --max-protocol-version exits 2 (stdio target), no process started", async () => {
    const run = await runCli([
      "tools",
      "--protocol-version",
      "2025-11-25",
      "--max-protocol-version",
      "2025-11-25",
      "--server-stderr",
      "--",
      process.execPath,
      "-e",
      "process.stderr.write('server started\\n'); setTimeout(() => {}, 5000)",
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout, "");
    assert.doesNotMatch(run.stderr, /server started/, "the server was never spawned");
    assert.equal(errorRecord(run).code, "config");
  });

  test("N2: the library refuses a pin with a ceiling as a config error before any I/O", async () => {
    const events: LifecycleEvent[] = [];
    await assert.rejects(
      connect({
        url: "http://127.0.0.1:9/never",
        protocolVersion: "2025-06-18",
        maxProtocolVersion: "2025-11-25",
        onEvent: (e) => events.push(e),
      }),
      (e: unknown) => e instanceof TetherError && e.code === "config",
    );
    assert.deepEqual(events, [], "nothing started");
  });
});
