// A modern server's discover result is kept with its era hint and adopted by a later connection
// that lists its tools at once: that listing is the first exchange, and a server that disagrees
// with the stored result gets it dropped and discovery run again inside the same deadline.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { FileEraHints } from "../../src/cli/era-hint-file.ts";
import { connect } from "../../src/index.ts";
import type { JsonObject } from "../../src/jsonrpc/messages.ts";
import { eraHintKey, MemoryEraHints, STORED_DISCOVER_MAX_AGE_MS } from "../../src/protocol/era-hints.ts";
import {
  discoverResult,
  type Handler,
  legacyStreamableHandler,
  MODERN_VERSION,
  modernStreamableHandler,
  startHttp,
} from "../helpers/hostile.ts";

/** A server whose behaviour a test can swap between connections. */
async function swappable(first: Handler) {
  let current = first;
  const server = await startHttp((res, rec, req) => current(res, rec, req));
  after(() => server.close());
  return {
    server,
    swap(next: Handler) {
      current = next;
    },
    /** The JSON-RPC methods received since `from`, in order. */
    methodsSince(from: number) {
      return server.requests.slice(from).flatMap((r) => (r.rpcMethod ? [r.rpcMethod] : []));
    },
  };
}

const keyOf = (url: string) => eraHintKey({ kind: "http", url: new URL(url) });

/** A modern server (swappable) whose discover result and tool list a first connection stored in `hints`. */
async function storedModern() {
  const s = await swappable(modernStreamableHandler());
  const hints = new MemoryEraHints();
  await (await connect({ url: s.server.url, eraHints: hints, prefetchTools: true })).close();
  return { s, hints };
}

test("N7: a stored discover result spares server/discover: a warm connection listing its tools sends one POST", async () => {
  const s = await swappable(modernStreamableHandler());
  const hints = new MemoryEraHints();
  const cold = await connect({ url: s.server.url, eraHints: hints, prefetchTools: true });
  await cold.close();
  assert.deepEqual(s.methodsSince(0), ["server/discover", "tools/list"]);
  assert.equal(hints.get(keyOf(s.server.url))?.discover?.protocolVersion, MODERN_VERSION);

  const from = s.server.requests.length;
  const warm = await connect({ url: s.server.url, eraHints: hints, prefetchTools: true });
  try {
    assert.deepEqual(s.methodsSince(from), ["tools/list"]);
    assert.equal(s.server.requests.length - from, 1, "one HTTP request in all");
    assert.equal(warm.era, "modern");
    assert.equal(warm.protocolVersion, MODERN_VERSION);
    assert.equal(warm.eraHint, "used");
    assert.deepEqual(
      warm.cachedTools?.map((t) => t.name),
      ["echo"],
    );
    assert.equal(warm.serverInfo?.name, "hostile-modern");
  } finally {
    await warm.close();
  }
});

test("N7: without an immediate tool listing the stored result is not adopted: connect still asks server/discover", async () => {
  const { s, hints } = await storedModern();
  const from = s.server.requests.length;
  const client = await connect({ url: s.server.url, eraHints: hints });
  await client.close();
  assert.deepEqual(s.methodsSince(from), ["server/discover"]);
});

test("N7: a server that became legacy disproves the stored result: it is dropped and detection runs again in the same connect", async () => {
  const { s, hints } = await storedModern();
  s.swap(legacyStreamableHandler());
  const from = s.server.requests.length;
  const client = await connect({ url: s.server.url, eraHints: hints, prefetchTools: true });
  try {
    assert.equal(client.era, "legacy");
    assert.equal(client.eraHint, "dropped");
    assert.deepEqual(
      client.cachedTools?.map((t) => t.name),
      ["echo"],
    );
    const methods = s.methodsSince(from);
    assert.equal(methods[0], "tools/list", "the stored result was tried first");
    assert.ok(methods.includes("server/discover") && methods.includes("initialize"), methods.join(", "));
    const hint = hints.get(keyOf(s.server.url));
    assert.equal(hint?.era, "legacy");
    assert.equal(hint?.discover, undefined);
  } finally {
    await client.close();
  }
});

test("N7: a server that no longer takes the stored version (-32022) gets a fresh discover and the version it lists", async () => {
  const { s, hints } = await storedModern();
  // The server now refuses everything once, as a server whose supported list changed would.
  let refused = 0;
  s.swap((res, rec, req) => {
    if (rec.rpcMethod === "tools/list" && refused++ === 0) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: rec.rpcId,
          error: {
            code: -32022,
            message: "Unsupported protocol version",
            data: { supported: [MODERN_VERSION] },
          },
        }),
      );
      return;
    }
    return modernStreamableHandler()(res, rec, req);
  });
  const from = s.server.requests.length;
  const client = await connect({ url: s.server.url, eraHints: hints, prefetchTools: true });
  try {
    assert.deepEqual(s.methodsSince(from), ["tools/list", "server/discover", "tools/list"]);
    assert.equal(client.eraHint, "dropped");
    assert.equal(client.protocolVersion, MODERN_VERSION);
  } finally {
    await client.close();
  }
});

test("N7: a stored result older than a day, or listing no version the policy takes, is not adopted", async () => {
  const s = await swappable(modernStreamableHandler());
  const key = keyOf(s.server.url);
  for (const discover of [
    {
      protocolVersion: MODERN_VERSION,
      result: discoverResult([MODERN_VERSION]),
      receivedAt: Date.now() - STORED_DISCOVER_MAX_AGE_MS - 60_000,
    },
    { protocolVersion: "2099-01-01", result: discoverResult(["2099-01-01"]), receivedAt: Date.now() },
    { protocolVersion: MODERN_VERSION, result: discoverResult(["2025-11-25"]), receivedAt: Date.now() },
  ]) {
    const hints = new MemoryEraHints();
    hints.set(key, { era: "modern", mode: "streamable-http", discover: discover as never });
    const from = s.server.requests.length;
    const client = await connect({ url: s.server.url, eraHints: hints, prefetchTools: true });
    await client.close();
    assert.deepEqual(s.methodsSince(from), ["server/discover", "tools/list"]);
  }
});

test("N7: a ceiling below the modern era ignores a stored modern result (a hint never overrides the policy)", async () => {
  const s = await swappable(legacyStreamableHandler());
  const hints = new MemoryEraHints();
  hints.set(keyOf(s.server.url), {
    era: "modern",
    mode: "streamable-http",
    discover: {
      protocolVersion: MODERN_VERSION,
      result: discoverResult([MODERN_VERSION]) as never,
      receivedAt: Date.now(),
    },
  });
  const client = await connect({
    url: s.server.url,
    eraHints: hints,
    prefetchTools: true,
    maxProtocolVersion: "2025-11-25",
  });
  await client.close();
  assert.equal(client.era, "legacy");
  assert.deepEqual(s.methodsSince(0), ["initialize", "notifications/initialized", "tools/list"]);
});

test("N7: the CLI's hint file keeps a discover result beside the era, bounded, and ignores a malformed one", () => {
  const dir = mkdtempSync(join(tmpdir(), "tether-discover-file-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const store = new FileEraHints(dir);
  const discover = {
    protocolVersion: MODERN_VERSION,
    result: discoverResult([MODERN_VERSION]) as JsonObject,
    receivedAt: 1,
  };
  store.set("a", { era: "modern", mode: "stdio", discover });
  assert.deepEqual(new FileEraHints(dir).get("a"), { era: "modern", mode: "stdio", discover });

  // Too large to keep: the era is kept, the result is not.
  const big = { ...discover, result: { ...discover.result, instructions: "x".repeat(64 * 1024) } };
  store.set("b", { era: "modern", mode: "stdio", discover: big });
  assert.deepEqual(store.get("b"), { era: "modern", mode: "stdio" });
  assert.ok(readFileSync(join(dir, "era-hints.json"), "utf8").length < 32 * 1024);

  // A malformed record on disk is no discover result.
  const doc = JSON.parse(readFileSync(join(dir, "era-hints.json"), "utf8"));
  doc.hints.a.discover = { protocolVersion: 7, result: [] };
  writeFileSync(join(dir, "era-hints.json"), JSON.stringify(doc));
  assert.deepEqual(store.get("a"), { era: "modern", mode: "stdio" });
});
