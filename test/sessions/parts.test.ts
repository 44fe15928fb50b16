// The session daemon's decisions and bounds, without processes: the idle decision on a fake
// clock, the frame ceiling on a real socket pair, errors crossing the socket, and shell words.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { words } from "../../src/cli/shell.ts";
import { TetherError } from "../../src/errors/tether-error.ts";
import {
  type Frame,
  FrameTooLarge,
  FrameWriter,
  readFrames,
  replyFrameCeiling,
  writeFrame,
} from "../../src/sessions/frames.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleTimer } from "../../src/sessions/idle.ts";
import { errorFromWire, errorToWire } from "../../src/sessions/wire.ts";
import { fakeClock, until } from "../helpers/fake-clock.ts";

test("K1: an idle session expires exactly at its timeout, never while a command or a watch is using it", async () => {
  const clock = fakeClock();
  let expired = 0;
  const idle = new IdleTimer(1_000, clock, () => {
    expired++;
  });
  await clock.advance(999);
  assert.equal(expired, 0);
  const end = idle.begin();
  await clock.advance(5_000);
  assert.equal(expired, 0, "nothing expires while a request is in flight");
  assert.equal(idle.busy, true);
  end();
  end(); // A second end is ignored.
  await clock.advance(999);
  assert.equal(expired, 0, "the clock starts again when the last use ends");
  await clock.advance(1);
  assert.equal(expired, 1);
  assert.equal(DEFAULT_IDLE_TIMEOUT_MS, 30 * 60 * 1000);
});

test("K1: a stopped idle timer never fires", async () => {
  const clock = fakeClock();
  let expired = 0;
  const idle = new IdleTimer(10, clock, () => {
    expired++;
  });
  idle.stop();
  await clock.advance(100);
  assert.equal(expired, 0);
  assert.equal(clock.pending().length, 0);
});

/** A connected pair of Unix sockets in a temp folder. */
async function socketPair(): Promise<{ a: Socket; b: Socket; done: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "tether-frames-"));
  const path = join(dir, "s.sock");
  let b!: Socket;
  const server = createServer((s) => {
    b = s;
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const a = connect(path);
  await new Promise<void>((resolve) => a.once("connect", resolve));
  while (!b) await new Promise((resolve) => setImmediate(resolve));
  return {
    a,
    b,
    done: () => {
      a.destroy();
      b.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("K1: frames arrive whole across chunks; a frame over the ceiling cuts the peer off", async () => {
  const { a, b, done } = await socketPair();
  try {
    const got: Frame[] = [];
    let bad: Error | undefined;
    const badSeen = new Promise<void>((resolve) =>
      readFrames(
        b,
        (f) => got.push(f),
        (e) => {
          bad = e;
          resolve();
        },
        1_000,
      ),
    );
    assert.ok(writeFrame(a, { id: 1, ok: "x".repeat(500) }));
    a.write('{"id":2,');
    a.write('"ok":true}\n');
    assert.equal(writeFrame(a, { id: 3, ok: "y".repeat(2_000) }, 1_000), false, "the writer refuses it too");
    a.write(`{"id":4,"ok":"${"z".repeat(2_000)}"}\n`);
    await badSeen;
    assert.deepEqual(
      got.map((f) => f.id),
      [1, 2],
    );
    assert.ok(bad instanceof FrameTooLarge);
    assert.ok(b.destroyed);
  } finally {
    done();
  }
});

test("K1: a large frame is written in slices, exact, never interleaved; over its ceiling it is refused whole", async () => {
  const { a, b, done } = await socketPair();
  try {
    const got: Frame[] = [];
    const ceiling = replyFrameCeiling(32 * 1024 * 1024);
    readFrames(
      b,
      (f) => got.push(f),
      () => {},
      ceiling,
    );
    // Surrogate pairs, quotes and controls straddle the 1 Mi-character slices.
    const unit = 'é"\\\n😀x';
    const big = unit.repeat(Math.ceil((3 * 1024 * 1024) / unit.length));
    const writer = new FrameWriter(a);
    const large = writer.write(
      { id: 1, ok: { content: [{ type: "text", text: big }], n: 1, u: undefined } },
      ceiling,
    );
    const small = writer.write({ id: 2, progress: { progress: 1 } });
    assert.equal(await large, true);
    assert.equal(await small, true);
    assert.equal(await writer.write({ id: 3, ok: { text: big } }, 1024 * 1024), false, "over the ceiling");
    await writer.write({ id: 4, ok: "last" });
    await until(() => got.length === 3, 10_000, "three frames");
    assert.deepEqual(
      got.map((f) => f.id),
      [1, 2, 4],
      "in order, the refused one never sent",
    );
    assert.deepEqual(
      got[0],
      JSON.parse(JSON.stringify({ id: 1, ok: { content: [{ type: "text", text: big }], n: 1 } })),
    );
    assert.equal((got[0]!.ok as { content: { text: string }[] }).content[0]!.text, big);
    assert.ok(replyFrameCeiling(1024) >= 64 * 1024 * 1024, "never below the default frame ceiling");
    assert.ok(replyFrameCeiling(256 * 1024 * 1024) > 256 * 1024 * 1024 * 1.25, "room for redaction");
  } finally {
    done();
  }
});

test("K1: an error crosses the socket as its public record and comes back the same; garbage is internal", () => {
  const original = new TetherError({
    code: "timeout",
    reason: "deadline_exceeded",
    stage: "call",
    phase: "call",
    message: "no reply within the 300 ms call budget",
    limits: { timeoutMs: 300 },
    effect: "unknown",
    attempt: 1,
  });
  const back = errorFromWire(JSON.parse(JSON.stringify(errorToWire(original))));
  assert.deepEqual(back.toJSON(), original.toJSON());
  assert.equal(errorFromWire({ code: "nonsense" }).code, "internal");
  assert.equal(errorFromWire("text").code, "internal");
});

test("K1: shell lines split into words, quotes keeping spaces", () => {
  assert.deepEqual(words(`call echo message="hello world" n:=3`), [
    "call",
    "echo",
    "message=hello world",
    "n:=3",
  ]);
  assert.deepEqual(words("  read  'demo://a b'  "), ["read", "demo://a b"]);
  assert.deepEqual(words(""), []);
});

test("K1: a long string read in pieces is written from its pieces, exact", async () => {
  const { JsonStreamParser } = await import("../../src/jsonrpc/json-stream.ts");
  const { a, b, done } = await socketPair();
  try {
    const text = `${'é😀"\\'.repeat(400_000)}${"x".repeat(1_500_000)}`;
    const parser = new JsonStreamParser(64);
    const json = JSON.stringify({ content: [{ type: "text", text }] });
    for (let at = 0; at < json.length; at += 65_536) parser.push(json.slice(at, at + 65_536));
    const result = parser.end().value as Frame;
    const got: Frame[] = [];
    readFrames(
      b,
      (f) => got.push(f),
      () => {},
      replyFrameCeiling(64 * 1024 * 1024),
    );
    assert.equal(
      await new FrameWriter(a).write({ id: 1, ok: result }, replyFrameCeiling(64 * 1024 * 1024)),
      true,
    );
    await until(() => got.length === 1, 10_000, "the frame");
    assert.equal((got[0]!.ok as { content: { text: string }[] }).content[0]!.text, text);
  } finally {
    done();
  }
});
