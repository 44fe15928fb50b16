// A session's life after the handshake: a transport that dies as establishment completes is never
// handed over (C3); a legacy session the server forgot is terminal, never silently re-initialised
// (C7); an optional GET stream the server refuses is not fatal (C8).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connect, TetherError } from "../../src/index.ts";
import { fakeClock, until } from "../helpers/fake-clock.ts";
import {
  empty,
  json,
  legacyStreamableHandler,
  rpcError,
  startHttp,
  startStdioScript,
} from "../helpers/hostile.ts";

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

test("C3: a server that exits right after answering initialize is never handed over as a client", async () => {
  const script = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: {}, serverInfo: { name: "x", version: "1" } } });
    setImmediate(() => process.exit(0));
    return;
  }
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
  cleanups.push(() => script.dispose());
  // A fake clock that never moves: settling at all means settling with no timer waited out.
  const clock = fakeClock();
  await assert.rejects(
    connect({
      command: script.command,
      args: script.args,
      eraHints: false,
      prefetchTools: true,
      timeoutMs: 10_000,
      deps: { clock },
    }),
    (e: unknown) => TetherError.is(e) && e.code === "connection",
  );
  assert.deepEqual(clock.fired(), [], "settles at once, not by a timer");
});

test("C7: a 404 on an established legacy session is terminal: session_expired, nothing re-initialised or replayed", async () => {
  let expired = false;
  const server = await startHttp(
    legacyStreamableHandler({
      "tools/call": (res, rec, req) => {
        if (!expired) return legacyStreamableHandler()(res, rec, req);
        return json(404, rpcError(null, -32001, "Session not found"))(res, rec, req);
      },
    }),
  );
  cleanups.push(() => server.close());
  const client = await connect({ url: server.url, eraHints: false, listen: false });
  try {
    assert.equal((await client.callTool("echo", { text: "a" })).isError ?? false, false);
    expired = true;
    await assert.rejects(client.callTool("echo", { text: "b" }), (e: unknown) => {
      assert.ok(TetherError.is(e));
      assert.equal(e.code, "connection");
      assert.equal(e.reason, "session_expired");
      assert.equal(e.httpStatus, 404);
      return true;
    });
    assert.equal(client.state === "closing" || client.state === "closed", true);
    const before = server.requests.length;
    await assert.rejects(client.callTool("echo", { text: "c" }), TetherError);
    assert.equal(server.requests.length, before, "nothing more is sent on an expired session");
    assert.equal(
      server.requests.filter((r) => r.rpcMethod === "initialize").length,
      1,
      "never re-initialised",
    );
    assert.equal(
      server.requests.filter((r) => r.rpcMethod === "tools/call").length,
      2,
      "the failed call is not replayed",
    );
  } finally {
    await client.close();
  }
});

for (const status of [404, 405]) {
  test(`C8: an optional GET stream answered ${status} is not fatal: calls go on`, async () => {
    const server = await startHttp(legacyStreamableHandler({ GET: empty(status) }));
    cleanups.push(() => server.close());
    const client = await connect({ url: server.url, eraHints: false, listen: true });
    try {
      // The background GET reached the server (and was refused there at once).
      await until(() => server.requests.some((r) => r.method === "GET"), 20_000, "the GET stream was tried");
      assert.equal(client.state, "open");
      const result = await client.callTool("echo", { text: "still here" });
      assert.equal(result.isError ?? false, false);
    } finally {
      await client.close();
    }
  });
}
