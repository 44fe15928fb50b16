// A failure is labelled once, where it is first seen (CONTRACT D1, X1, X4): the stage_end event
// of the stage that failed carries the same code, reason, HTTP status and JSON-RPC code as the
// error connect() rejects with, whatever the server refused with.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type ConnectOptions, connect, type LifecycleEvent } from "../../src/index.ts";
import {
  eventLog,
  fixtureSet,
  type Loopback,
  rpcError,
  sendJson,
  tetherErrorOf,
  timed,
} from "../helpers/deadline-servers.ts";

const { serve, closeAll } = fixtureSet();
after(closeAll);

const base = { eraHints: false, timeoutMs: 5_000, listen: false } as const satisfies Partial<ConnectOptions>;

/** A server that refuses every POST with `status` (and a JSON-RPC error body, when `rpcCode` is given). */
function refusing(status: number, rpcCode?: number): Promise<Loopback> {
  return serve((rec, res) => {
    if (rpcCode === undefined) {
      res.writeHead(status, { "content-type": "text/plain" });
      res.end("no");
      return;
    }
    sendJson(res, status, rpcError(rec.rpcId, rpcCode, "refused"));
  });
}

function failedStage(events: LifecycleEvent[]) {
  const ends = events.filter((e) => e.type === "stage_end" && !e.ok);
  assert.equal(ends.length, 1, "exactly one stage failed");
  const end = ends[0]!;
  assert.ok(end.type === "stage_end");
  return end;
}

describe("D1/X4: one label for a failure, in the event and in the error", () => {
  const rows: { status: number; rpcCode?: number; code: string; transport?: "streamable-http" }[] = [
    { status: 401, code: "unauthorized" },
    { status: 403, code: "forbidden" },
    { status: 429, code: "throttled" },
    { status: 503, code: "upstream" },
    { status: 500, rpcCode: -32603, code: "upstream" },
    { status: 404, code: "protocol", transport: "streamable-http" },
    { status: 400, rpcCode: -32600, code: "remote_error", transport: "streamable-http" },
  ];
  for (const row of rows) {
    const body = row.rpcCode === undefined ? "" : ` with JSON-RPC ${row.rpcCode}`;
    test(`D1, X4: HTTP ${row.status}${body}: stage_end and the error both say ${row.code}`, async () => {
      const server = await refusing(row.status, row.rpcCode);
      const log = eventLog();
      const run = await timed(() =>
        connect({
          ...base,
          url: server.url,
          transport: row.transport ?? "auto",
          maxProtocolVersion: "2025-11-25",
          onEvent: log.onEvent,
        }),
      );
      const error = tetherErrorOf(run);
      const end = failedStage(log.events);
      assert.equal(error.code, row.code);
      assert.deepEqual(
        [end.stage, end.code, end.reason, end.httpStatus, end.rpcCode, end.cancellation],
        [error.stage, error.code, error.reason, error.httpStatus, error.rpcCode, error.cancellation],
        "the stage_end event carries the error's label",
      );
      const attemptEnd = log.events.find((e) => e.type === "attempt_end");
      assert.ok(attemptEnd?.type === "attempt_end" && attemptEnd.ok === false);
      assert.deepEqual(
        [attemptEnd.code, attemptEnd.reason, attemptEnd.stage],
        [error.code, error.reason, error.stage],
      );
    });
  }
});
