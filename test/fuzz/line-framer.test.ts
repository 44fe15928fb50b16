// Property-based fuzzing of the stdio line framer (src/transport/line-framer.ts): arbitrary bytes
// (multibyte text, stray CRs, raw binary) cut into arbitrary chunks, including cuts inside a
// multibyte character and between a CR and its LF.
//
// The model: a frame is what lies between two LFs, without one CR right before the LF; blank
// frames are skipped; a frame's bytes, its line ending not counted, may be at most the ceiling.
// A frame is refused as soon as the bytes seen prove it too long; an unfinished frame ending in
// CR is not yet proven one byte longer, since that CR may be the start of its line ending.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ByteCeilingExceeded } from "../../src/errors/byte-ceiling.ts";
import { LineFramer } from "../../src/transport/line-framer.ts";
import { type Chunking, chunkings, concat, lineText, split, utf8 } from "./chunks.ts";
import { fuzz } from "./fuzz-config.ts";

const LF = 0x0a;
const CR = 0x0d;

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Byte streams rich in line endings: text lines, LF, CRLF, lone CR, and raw binary. */
const stream: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: lineText.map(utf8) },
      { weight: 2, arbitrary: fc.constantFrom("\n", "\r\n", "\r", "\n\n", "\r\r\n").map(utf8) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 6 }) },
    ),
    { maxLength: 20 },
  )
  .map(concat);

/** Ceilings around the frame lengths the stream arbitrary makes, so exact boundaries come up often. */
const ceiling = fc.integer({ min: 1, max: 40 });

interface Expected {
  frames: string[];
  /** Whether the bytes prove a frame longer than the ceiling. */
  overflow: boolean;
  /** Bytes held of the unfinished last frame (when there is no overflow). */
  pending: number;
}

function model(bytes: Uint8Array, max: number): Expected {
  const frames: string[] = [];
  let start = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    if (bytes[i] !== LF) continue;
    const end = i > start && bytes[i - 1] === CR ? i - 1 : i;
    if (end - start > max) return { frames, overflow: true, pending: 0 };
    if (end > start) frames.push(hex(bytes.subarray(start, end)));
    start = i + 1;
  }
  const tail = bytes.byteLength - start;
  const proven = tail > 0 && bytes[bytes.byteLength - 1] === CR ? tail - 1 : tail;
  return { frames, overflow: proven > max, pending: tail };
}

interface Fed {
  frames: string[];
  /** Index of the chunk whose push threw, or -1. */
  refusedAt: number;
  error: unknown;
  framer: LineFramer;
}

function feed(max: number, chunks: readonly Uint8Array[]): Fed {
  const framer = new LineFramer(max);
  const frames: string[] = [];
  for (let k = 0; k < chunks.length; k++) {
    try {
      framer.push(chunks[k]!, (line) => frames.push(hex(line)));
    } catch (error) {
      return { frames, refusedAt: k, error, framer };
    }
  }
  return { frames, refusedAt: -1, error: undefined, framer };
}

/** The first chunk after which the bytes seen so far prove a frame too long, or -1. */
function firstProvenOverflow(chunks: readonly Uint8Array[], max: number): number {
  for (let k = 0; k < chunks.length; k++) {
    if (model(concat(chunks.slice(0, k + 1)), max).overflow) return k;
  }
  return -1;
}

test("P5: the line framer yields the same frames however the bytes are chunked (multibyte, CR|LF cuts)", () => {
  fc.assert(
    fc.property(stream, chunkings, ceiling, (bytes: Uint8Array, chunking: Chunking, max: number) => {
      const whole = feed(max, [bytes]);
      const pieces = feed(max, split(bytes, chunking));
      assert.deepEqual(pieces.frames, whole.frames, "the same frames, in the same order");
      assert.equal(pieces.refusedAt !== -1, whole.refusedAt !== -1, "refused in pieces iff refused whole");
    }),
    fuzz(3000),
  );
});

test("P5, P6: a frame of exactly the ceiling passes, one byte more is refused as soon as it is seen, and the framer stays finished", () => {
  fc.assert(
    fc.property(stream, chunkings, ceiling, (bytes: Uint8Array, chunking: Chunking, max: number) => {
      const chunks = split(bytes, chunking);
      const expected = model(bytes, max);
      const fed = feed(max, chunks);
      for (const f of fed.frames)
        assert.ok(f.length / 2 <= max, `a ${f.length / 2}-byte frame passed ${max}`);
      assert.deepEqual(fed.frames, expected.frames, "every frame before the refusal, and only those");
      assert.equal(
        fed.refusedAt,
        firstProvenOverflow(chunks, max),
        "refused at the first chunk that proves it",
      );
      if (fed.refusedAt === -1) {
        assert.equal(fed.framer.pendingBytes, expected.pending);
        return;
      }
      assert.ok(fed.error instanceof ByteCeilingExceeded, `refused with ${String(fed.error)}`);
      assert.equal(fed.error.maxBytes, max);
      assert.ok(fed.error.observedBytes > max, `observedBytes ${fed.error.observedBytes} > ${max}`);
      // Finished: more bytes, even a harmless newline, are refused and reach no callback.
      for (const more of [utf8("\n"), utf8("ok\n"), new Uint8Array()]) {
        assert.throws(
          () =>
            fed.framer.push(more, () => {
              throw new Error("a finished framer handed on a frame");
            }),
          ByteCeilingExceeded,
        );
      }
    }),
    fuzz(3000),
  );
});
