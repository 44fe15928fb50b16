// A session's first start reports its own failure (CONTRACT K1, X4): the first `session start`
// also launches the session process, and that process exits once it holds no session; its reply
// must still reach the command first. For every error code a start can meet, from hostile HTTP
// servers and a closed port, `session start` reports the same code, reason and exit status as the
// same one-shot command, never "its session process went away"; and the session process is gone.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { sessionPlace } from "../../src/sessions/folder.ts";
import { type CliRun, errorRecord } from "../helpers/cli.ts";
import { until } from "../helpers/fake-clock.ts";
import {
  empty,
  type Handler,
  type HostileServer,
  hang,
  json,
  legacyStreamableHandler,
  rpcError,
  startHttp,
  text,
} from "../helpers/hostile.ts";
import { sandboxFor } from "../sessions/sandbox.ts";

interface Case {
  /** What the start must report, as the one-shot command does. */
  code: string;
  exit: number;
  handler?: Handler;
  /** Target words instead of the case's server. */
  target?: () => string[];
  flags?: string[];
}

const CASES: Record<string, Case> = {
  "401": { code: "unauthorized", exit: 6, handler: empty(401) },
  "403": { code: "forbidden", exit: 6, handler: empty(403) },
  "429": { code: "throttled", exit: 7, handler: empty(429) },
  "502": { code: "upstream", exit: 7, handler: text(502, "bad gateway") },
  "a silent server": { code: "timeout", exit: 4, handler: hang(), flags: ["--discovery-timeout", "1500"] },
  "a reply that is not JSON": {
    code: "protocol",
    exit: 3,
    handler: text(200, "{not json", "application/json"),
    flags: ["--protocol-version", "2025-06-18"],
  },
  "an initialize reply over the byte ceiling": {
    code: "limit",
    exit: 5,
    handler: legacyStreamableHandler({
      initialize: json(200, { jsonrpc: "2.0", id: 0, result: { pad: "x".repeat(64 * 1024) } }),
    }),
    flags: ["--max-bytes", "4096", "--protocol-version", "2025-06-18"],
  },
  "initialize refused with a JSON-RPC error": {
    code: "remote_error",
    exit: 7,
    handler: legacyStreamableHandler({
      initialize: (res, rec, req) => json(200, rpcError(rec.rpcId, -32603, "no"))(res, rec, req),
    }),
    flags: ["--protocol-version", "2025-06-18"],
  },
  "a closed port": { code: "connection", exit: 3, target: () => ["http://127.0.0.1:9/mcp"] },
  "a pin and a ceiling at once": {
    code: "config",
    exit: 2,
    handler: hang(),
    flags: ["--protocol-version", "2025-06-18", "--max-protocol-version", "2025-06-18"],
  },
};

const servers = new Map<string, HostileServer>();
before(async () => {
  for (const [name, c] of Object.entries(CASES)) if (c.handler) servers.set(name, await startHttp(c.handler));
});
after(async () => {
  await Promise.all([...servers.values()].map((s) => s.close()));
});

function same(start: CliRun, oneShot: CliRun, expected: Case, what: string): void {
  assert.equal(oneShot.code, expected.exit, `one-shot ${what}: ${oneShot.stderr}`);
  const want = errorRecord(oneShot);
  assert.equal(want.code, expected.code, `one-shot ${what}`);
  assert.equal(start.code, expected.exit, `session start ${what}: ${start.stderr}`);
  assert.equal(start.stdout, "");
  assert.equal(start.stderr.trim().split("\n").length, 1, `exactly one record: ${start.stderr}`);
  const got = errorRecord(start);
  assert.doesNotMatch(String(got.message), /session process went away/);
  for (const key of ["code", "reason", "stage", "phase", "httpStatus", "rpcCode"])
    assert.equal(got[key], want[key], `${what}: ${key} as the one-shot command reports it`);
}

describe("a session's first start", { concurrency: 4 }, () => {
  for (const [name, c] of Object.entries(CASES)) {
    test(`K1: a first start against ${name} reports ${c.code} (exit ${c.exit}) as the one-shot command does`, async (t) => {
      const box = sandboxFor(t);
      const target = c.target?.() ?? [servers.get(name)!.url];
      const flags = c.flags ?? [];
      const [start, oneShot] = await Promise.all([
        box.run(["session", "start", "s", ...target, ...flags]),
        box.run(["tools", ...target, ...flags]),
      ]);
      same(start, oneShot, c, name);
      // The session process ends with no session to hold.
      const { socket } = sessionPlace(box.env);
      await until(() => !existsSync(socket), 10_000, "the session process to exit");
    });
  }

  test("K1: Ctrl-C during a first start reports cancelled (exit 130), and the session process exits", async (t) => {
    const box = sandboxFor(t);
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = await startHttp((res, rec, req) => {
      arrived();
      return hang()(res, rec, req);
    });
    t.after(() => server.close());
    const start = await box.run(["session", "start", "s", server.url], {
      signalWhen: { signal: "SIGINT", ready: reached },
    });
    assert.equal(start.code, 130, start.stderr);
    assert.equal(start.stderr.trim().split("\n").length, 1, start.stderr);
    assert.equal(errorRecord(start).code, "cancelled");
    const { socket } = sessionPlace(box.env);
    await until(() => !existsSync(socket), 10_000, "the session process to exit");
  });
});
