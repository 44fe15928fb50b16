// The explorer's event stream keeps a bounded past for a page that opens later (CONTRACT S9's
// explorer, under the bounds of S5): at most 2000 items, 16 MiB in all, each cut past 256 KiB.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Feed, MAX_ITEM_CHARS } from "./feed.ts";

/** What a page that opens now receives first: the kept items' frames, parsed. */
async function replay(feed: Feed, lastSeq: number): Promise<Record<string, unknown>[]> {
  const server = createServer((_req, res) => feed.open(res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const stop = new AbortController();
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
      signal: stop.signal,
    });
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk);
      if (text.includes(`"seq":${lastSeq},`) && text.endsWith("\n\n")) break;
    }
    return text
      .split("\n\n")
      .filter((f) => f.startsWith("data: "))
      .map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>);
  } finally {
    stop.abort();
    feed.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test("S9: a page that opens later gets the last 2000 items, in order", async () => {
  const feed = new Feed();
  for (let i = 1; i <= 2500; i++) feed.push({ kind: "log", data: i });
  const items = await replay(feed, 2500);
  assert.equal(items.length, 2000);
  assert.equal(items[0]!.data, 501);
  assert.equal(items.at(-1)!.seq, 2500);
});

test("S9: the kept past stays within 16 MiB in all, the oldest dropped first", async () => {
  const feed = new Feed();
  feed.push({ kind: "message", body: "x".repeat(MAX_ITEM_CHARS + 1) });
  for (let i = 0; i < 70; i++) feed.push({ kind: "message", body: "y".repeat(MAX_ITEM_CHARS - 200) });
  const items = await replay(feed, 71);
  const chars = items.reduce((n, item) => n + JSON.stringify(item).length, 0);
  assert.ok(chars <= 16 * 1024 * 1024, `${chars} characters kept`);
  assert.ok(items.length < 71, "the oldest went first");
  assert.equal(items.at(-1)!.seq, 71);
});

test("S9: the first item is cut when it alone is past the bound", async () => {
  const feed = new Feed();
  feed.push({ kind: "message", body: "x".repeat(MAX_ITEM_CHARS + 1) });
  feed.push({ kind: "log", data: "after" });
  const items = await replay(feed, 2);
  assert.deepEqual(
    items.map((i) => [i.seq, i.kind, i.of]),
    [
      [1, "cut", "message"],
      [2, "log", undefined],
    ],
  );
});
