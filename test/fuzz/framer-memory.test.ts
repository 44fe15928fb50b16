// Memory under garbage (P5, P6): 50 MB of generated garbage pushed through the line framer and
// the SSE reader with a 1 MiB ceiling leaves the heap (and buffers) no more than a few MiB larger
// than before. Frames and events are dropped as they are handed on, so whatever a framer keeps
// is what it holds itself: at most one unfinished frame under the ceiling. Measured after a full
// collection at several points of the flood, with the framer still alive.

import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ByteCeilingExceeded } from "../../src/errors/byte-ceiling.ts";
import { LineFramer } from "../../src/transport/line-framer.ts";
import { SseReader } from "../../src/transport/sse-framer.ts";
import { SEED } from "./fuzz-config.ts";

const MiB = 1024 * 1024;
const FLOOD_BYTES = 50 * 1000 * 1000;
const CEILING = 1 * MiB;
/** What the flood may leave behind: the one unfinished frame the framer may hold, and some slack. */
const MAX_GROWTH_BYTES = 4 * MiB;
const CHECKPOINTS = 5;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A small seeded generator (mulberry32), so the garbage is the same for the same seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Heap and buffers in use after full collections; buffers are released by a sweeper that runs after the collection. */
async function retained(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * Feeds FLOOD_BYTES of `pool`, front to back and round again, in chunks of 1 byte to 64 KiB, and
 * returns the largest growth of retained memory seen at the checkpoints.
 */
async function flood(pool: Uint8Array, push: (chunk: Uint8Array) => void): Promise<number> {
  const next = random(SEED);
  const baseline = await retained();
  let growth = 0;
  let fed = 0;
  let at = 0;
  let checkpoint = FLOOD_BYTES / CHECKPOINTS;
  while (fed < FLOOD_BYTES) {
    const size = 1 + Math.floor(next() * 64 * 1024);
    const chunk = pool.subarray(at, Math.min(at + size, pool.byteLength));
    at = at + chunk.byteLength === pool.byteLength ? 0 : at + chunk.byteLength;
    push(chunk);
    fed += chunk.byteLength;
    if (fed >= checkpoint) {
      growth = Math.max(growth, (await retained()) - baseline);
      checkpoint += FLOOD_BYTES / CHECKPOINTS;
    }
  }
  return growth;
}

/**
 * 4 MiB of garbage in segments: each starts with one of `breaks` then `prefix`, then 1 byte to
 * 900 KiB of random bytes (binary, with no CR or LF) or printable ASCII text. With no breaks
 * given, the whole pool is one unbroken run of garbage.
 */
function pool(kind: "binary" | "text", breaks: readonly string[], prefix = ""): Uint8Array {
  const next = random(SEED ^ 0x5eed);
  const enc = new TextEncoder();
  const out = new Uint8Array(4 * MiB);
  let i = 0;
  while (i < out.byteLength) {
    if (breaks.length > 0) {
      const head = enc.encode(breaks[Math.floor(next() * breaks.length)]! + prefix);
      out.set(head.subarray(0, out.byteLength - i), i);
      i += head.byteLength;
    }
    const end =
      breaks.length > 0 ? Math.min(out.byteLength, i + 1 + Math.floor(next() * 900 * 1024)) : out.byteLength;
    for (; i < end; i++) {
      const r = Math.floor(next() * 256);
      out[i] = kind === "binary" ? (r === 0x0a || r === 0x0d ? 0x20 : r) : 0x20 + (r % 95);
    }
  }
  return out;
}

const mib = (n: number) => `${(n / MiB).toFixed(2)} MiB`;

test("P5, P6: 50 MB of garbage lines through the line framer (1 MiB ceiling) leave the heap at most a few MiB larger", async (t) => {
  const framer = new LineFramer(CEILING);
  let frames = 0;
  const growth = await flood(pool("binary", ["\n", "\r\n", "\n\n", "\r\r\n"]), (chunk) => {
    framer.push(chunk, () => {
      frames++;
    });
  });
  t.diagnostic(`retained growth ${mib(growth)} over ${frames} frames`);
  assert.ok(frames > 0);
  assert.ok(growth <= MAX_GROWTH_BYTES, `retained ${mib(growth)} (at most ${mib(MAX_GROWTH_BYTES)})`);
  assert.ok(framer.pendingBytes <= CEILING);
});

test("P5, P6: 50 MB of garbage events through the SSE reader (1 MiB ceiling) leave the heap at most a few MiB larger", async (t) => {
  const reader = new SseReader(CEILING);
  let events = 0;
  // Every segment ends the event before it with a blank line and starts a data line.
  const text = pool("text", ["\n\n", "\r\n\r\n", "\r\r", "\n\n: comment\n"], "data: ");
  const growth = await flood(text, (chunk) => {
    reader.push(chunk, () => {
      events++;
    });
  });
  t.diagnostic(`retained growth ${mib(growth)} over ${events} events`);
  assert.ok(events > 0);
  assert.ok(growth <= MAX_GROWTH_BYTES, `retained ${mib(growth)} (at most ${mib(MAX_GROWTH_BYTES)})`);
});

test("P6: 50 MB of garbage without a line break is refused at the 1 MiB ceiling, and nothing more is kept", async () => {
  const framer = new LineFramer(CEILING);
  const reader = new SseReader(CEILING);
  const noBreaks = pool("text", []);
  let refusedLine = 0;
  let refusedSse = 0;
  const growth = await flood(noBreaks, (chunk) => {
    try {
      framer.push(chunk, () => assert.fail("no frame can end without a line break"));
    } catch (e) {
      assert.ok(e instanceof ByteCeilingExceeded);
      refusedLine++;
    }
    try {
      reader.push(chunk, () => assert.fail("no event can end without a blank line"));
    } catch (e) {
      assert.ok(e instanceof ByteCeilingExceeded);
      refusedSse++;
    }
  });
  assert.ok(refusedLine > 0 && refusedSse > 0, "both refused");
  assert.ok(growth <= MAX_GROWTH_BYTES, `retained ${mib(growth)} (at most ${mib(MAX_GROWTH_BYTES)})`);
});
