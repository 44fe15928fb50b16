import assert from "node:assert/strict";
import { test } from "node:test";
import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { ByteBudget, readBounded } from "./byte-budget.ts";
import { LineFramer } from "./line-framer.ts";
import { SseReader } from "./sse-framer.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Every way of cutting `bytes` into two or three chunks, plus one byte at a time. */
function* splits(bytes: Uint8Array): Generator<Uint8Array[]> {
  yield [bytes];
  yield Array.from(bytes, (b) => Uint8Array.of(b));
  for (let i = 1; i < bytes.length; i++) {
    yield [bytes.subarray(0, i), bytes.subarray(i)];
    const j = Math.min(bytes.length - 1, i + 3);
    if (j > i) yield [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)];
  }
}

test("P5: the line framer yields the same frames however the bytes are chunked, multibyte text included", () => {
  const input = enc.encode('{"a":"é☃"}\n\n{"b":"𝄞"}\r\n{"c":1}\n');
  for (const chunks of splits(input)) {
    const framer = new LineFramer(64);
    const lines: string[] = [];
    for (const c of chunks) framer.push(c, (l) => lines.push(dec.decode(l)));
    assert.deepEqual(lines, ['{"a":"é☃"}', '{"b":"𝄞"}', '{"c":1}']);
  }
});

test("P5: a line of exactly the ceiling in bytes passes; one byte more is refused with observedBytes", () => {
  const line = '{"x":"éé"}'; // 12 bytes, 10 characters
  const bytes = enc.encode(`${line}\n`);
  assert.equal(Buffer.byteLength(line), 12);
  for (const chunks of splits(bytes)) {
    const ok = new LineFramer(12);
    const got: string[] = [];
    for (const c of chunks) ok.push(c, (l) => got.push(dec.decode(l)));
    assert.deepEqual(got, [line]);
    const strict = new LineFramer(11);
    assert.throws(
      () => {
        for (const c of chunks) strict.push(c, () => {});
      },
      (e: unknown) => e instanceof ByteCeilingExceeded && e.observedBytes >= 12 && e.maxBytes === 11,
    );
  }
});

test("P6: the line framer is finished after a refusal", () => {
  const framer = new LineFramer(4);
  assert.throws(() => framer.push(enc.encode("123456"), () => {}), ByteCeilingExceeded);
  assert.throws(() => framer.push(enc.encode("\n1\n"), () => {}), ByteCeilingExceeded);
});

test("P5: the SSE reader yields the same events however the bytes are chunked", () => {
  const input = enc.encode(
    'event: endpoint\ndata: /m?s=1\n\n: keep-alive\n\nid: 7\ndata: {"a":"é"}\r\n\r\nretry: 250\ndata: a\ndata: b\n\n',
  );
  for (const chunks of splits(input)) {
    const reader = new SseReader(1024);
    const events: string[] = [];
    for (const c of chunks) reader.push(c, (e) => events.push(`${e.event}|${e.id ?? ""}|${e.data}`));
    assert.deepEqual(events, ["endpoint||/m?s=1", 'message|7|{"a":"é"}', "message||a\nb"]);
    assert.equal(reader.retryMs, 250);
  }
});

test("P5: an SSE event of exactly the ceiling (framing included) passes; one byte less refuses it", () => {
  const block = enc.encode('data: {"v":"☃☃"}\n\n');
  const n = block.byteLength;
  for (const chunks of splits(block)) {
    const ok = new SseReader(n);
    const got: number[] = [];
    for (const c of chunks) ok.push(c, (e) => got.push(e.bytes));
    assert.deepEqual(got, [n]);
    const strict = new SseReader(n - 1);
    assert.throws(
      () => {
        for (const c of chunks) strict.push(c, () => {});
      },
      (e: unknown) => e instanceof ByteCeilingExceeded && e.maxBytes === n - 1 && e.observedBytes >= n,
    );
  }
});

function streamOf(chunks: Uint8Array[]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

test("P5: a body of exactly the ceiling is read whole; one byte more is refused and the reader cancelled (P6)", async () => {
  const body = enc.encode("x".repeat(100));
  const parts = [body.subarray(0, 33), body.subarray(33, 66), body.subarray(66)];
  const whole = await readBounded(streamOf(parts).stream, new ByteBudget(100), new AbortController().signal);
  assert.equal(whole.byteLength, 100);
  const s = streamOf([...parts, enc.encode("y"), enc.encode("z".repeat(1000))]);
  await assert.rejects(
    readBounded(s.stream, new ByteBudget(100), new AbortController().signal),
    (e: unknown) => e instanceof ByteCeilingExceeded && e.observedBytes === 101,
  );
  assert.equal(s.cancelled(), true);
});

test("P6: aborting a bounded read rejects with the signal's reason and cancels the source", async () => {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull() {
      return new Promise(() => {});
    },
    cancel() {
      cancelled = true;
    },
  });
  const controller = new AbortController();
  const reason = new Error("stop");
  const read = readBounded(stream, new ByteBudget(10), controller.signal);
  controller.abort(reason);
  await assert.rejects(read, (e) => e === reason);
  await new Promise((r) => setImmediate(r));
  assert.equal(cancelled, true);
});
