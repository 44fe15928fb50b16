// Property-based fuzzing of the SSE reader (src/transport/sse-framer.ts, on eventsource-parser):
// arbitrary event streams (event, id, retry, comments, multi-line data, unknown fields, CRLF, CR
// and LF endings, a BOM) cut into arbitrary chunks, checked against the reader fed all at once
// and against a reference reading of the SSE rules (./sse-model.ts).

import assert from "node:assert/strict";
import { test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { ByteCeilingExceeded } from "../../src/errors/byte-ceiling.ts";
import { InvalidUtf8, type SseEvent, SseReader } from "../../src/transport/sse-framer.ts";
import { type Chunking, chunkings, concat, lineText, split, utf8 } from "./chunks.ts";
import { fuzz } from "./fuzz-config.ts";
import { blocksOf, readSse } from "./sse-model.ts";

const ending = fc.constantFrom("\n", "\r\n", "\r");

const fieldLine: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom("data", "data", "event", "id"), fc.constantFrom(": ", ":", ""), lineText)
      .map(([name, sep, value]) => (sep === "" ? name : `${name}${sep}${value}`)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(": ", ":"), fc.oneof(fc.nat().map(String), lineText))
      .map(([sep, value]) => `retry${sep}${value}`),
  },
  { weight: 1, arbitrary: lineText.map((t) => `:${t}`) },
  { weight: 1, arbitrary: lineText },
);

const line = fc.tuple(fieldLine, ending).map(([l, e]) => `${l}${e}`);
const block = fc.tuple(fc.array(line, { maxLength: 5 }), ending).map(([ls, e]) => `${ls.join("")}${e}`);

/** A stream: an optional BOM, whole event blocks, and maybe an unfinished block at the end. */
const sseStream: fc.Arbitrary<Uint8Array> = fc
  .tuple(fc.boolean(), fc.array(block, { maxLength: 6 }), fc.array(line, { maxLength: 2 }), lineText)
  .map(([bom, blocks, tail, partial]) =>
    utf8(`${bom ? "\uFEFF" : ""}${blocks.join("")}${tail.join("")}${partial}`),
  );

type Seen = Pick<SseEvent, "event" | "data" | "id" | "bytes">;

interface Fed {
  events: Seen[];
  refusedAt: number;
  error: unknown;
  reader: SseReader;
}

function feed(max: number, chunks: readonly Uint8Array[]): Fed {
  const reader = new SseReader(max);
  const events: Seen[] = [];
  for (let k = 0; k < chunks.length; k++) {
    try {
      reader.push(chunks[k]!, (e) => events.push({ event: e.event, data: e.data, id: e.id, bytes: e.bytes }));
    } catch (error) {
      return { events, refusedAt: k, error, reader };
    }
  }
  return { events, refusedAt: -1, error: undefined, reader };
}

const BIG = 1 << 20;
const strip = (events: readonly Seen[]) => events.map(({ event, data, id }) => ({ event, data, id }));

test("P5: the SSE reader yields the same events, sizes and refusals however the bytes are chunked", () => {
  fc.assert(
    fc.property(
      sseStream,
      chunkings,
      fc.oneof(fc.integer({ min: 1, max: 48 }), fc.constant(BIG)),
      (bytes: Uint8Array, chunking: Chunking, max: number) => {
        const whole = feed(max, [bytes]);
        const pieces = feed(max, split(bytes, chunking));
        assert.deepEqual(pieces.events, whole.events);
        assert.equal(pieces.reader.retryMs, whole.reader.retryMs);
        assert.equal(pieces.refusedAt !== -1, whole.refusedAt !== -1, "refused in pieces iff refused whole");
        if (whole.error instanceof Error)
          assert.equal((pieces.error as Error | undefined)?.constructor, whole.error.constructor);
      },
    ),
    fuzz(2000),
  );
});

/**
 * What the reader must have delivered: every complete block's event. A block whose blank line
 * ends in a lone CR at the very end of the input may still be held (see sse-model.ts).
 */
function expectedReading(bytes: Uint8Array, fed: Fed): ReturnType<typeof readSse> {
  const now = readSse(bytes);
  const held = readSse(bytes, true);
  const same = (r: ReturnType<typeof readSse>) =>
    r.retryMs === fed.reader.retryMs && isDeepStrictEqual(strip(r.events), strip(fed.events));
  return same(held) && !same(now) ? held : now;
}

test("the SSE reader delivers every complete event as the SSE rules read it (CR, LF, CRLF endings, BOM)", () => {
  fc.assert(
    fc.property(sseStream, chunkings, (bytes: Uint8Array, chunking: Chunking) => {
      const fed = feed(BIG, split(bytes, chunking));
      const expected = expectedReading(bytes, fed);
      assert.equal(fed.error, undefined);
      assert.deepEqual(strip(fed.events), strip(expected.events));
      assert.equal(fed.reader.retryMs, expected.retryMs);
    }),
    fuzz(2000),
  );
});

test("P5: an SSE event of exactly the ceiling (framing included) passes and one byte more is refused, as soon as it is seen", () => {
  fc.assert(
    fc.property(
      sseStream,
      chunkings,
      fc.integer({ min: 1, max: 48 }),
      (bytes: Uint8Array, chunking: Chunking, max: number) => {
        const chunks = split(bytes, chunking);
        const fed = feed(max, chunks);
        const { blocks, tailStart } = blocksOf(bytes);
        // The first byte at which some block (or the unfinished rest) has passed the ceiling.
        let overAt = -1;
        for (const b of [...blocks, { start: tailStart, end: bytes.byteLength }]) {
          if (b.end - b.start > max) {
            overAt = b.start + max;
            break;
          }
        }
        let refusedAt = -1;
        for (let k = 0, seen = 0; k < chunks.length && overAt !== -1; k++) {
          seen += chunks[k]!.byteLength;
          if (seen > overAt) {
            refusedAt = k;
            break;
          }
        }
        assert.equal(fed.refusedAt, refusedAt, "refused at the chunk that carried the first byte too many");
        // Delivered before the refusal: the events of the blocks that lie wholly before it.
        const sizes = expectedReading(bytes, fed)
          .events.filter((e) => overAt === -1 || e.block.end <= overAt)
          .map((e) => e.bytes);
        assert.deepEqual(
          fed.events.map((e) => e.bytes),
          sizes,
          "each event delivered before the refusal, charged exactly its own block",
        );
        for (const e of fed.events) assert.ok(e.bytes <= max, `a ${e.bytes}-byte event passed ${max}`);
        if (refusedAt === -1) return;
        assert.ok(fed.error instanceof ByteCeilingExceeded, `refused with ${String(fed.error)}`);
        assert.equal(fed.error.maxBytes, max);
        assert.ok(fed.error.observedBytes > max, `observedBytes ${fed.error.observedBytes} > ${max}`);
        assert.throws(() => fed.reader.push(utf8("data: more\n\n"), () => {}), ByteCeilingExceeded);
      },
    ),
    fuzz(2000),
  );
});

/** Byte sequences that are not UTF-8 (none contains CR or LF, so the stream's lines stay put). */
const invalidUtf8: fc.Arbitrary<number[]> = fc.constantFrom<number[]>(
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0xaf],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9d, 0x84],
);

test("invalid UTF-8 in a complete SSE event fails with InvalidUtf8, never anything else, and the reader stays finished", () => {
  fc.assert(
    fc.property(
      sseStream,
      fc.array(fc.tuple(fc.nat(), invalidUtf8), { minLength: 1, maxLength: 3 }),
      chunkings,
      (valid: Uint8Array, inserts: [number, number[]][], chunking: Chunking) => {
        const parts: Uint8Array[] = [];
        let at = 0;
        for (const [pos, bad] of [...inserts].sort((a, b) => (a[0] % 1e6) - (b[0] % 1e6))) {
          const p = Math.max(at, pos % (valid.byteLength + 1));
          parts.push(valid.subarray(at, p), Uint8Array.from(bad));
          at = p;
        }
        parts.push(valid.subarray(at));
        const bytes = concat(parts);
        const chunks = split(bytes, chunking);
        const strict = new TextDecoder("utf-8", { fatal: true });
        const isBad = (b: { start: number; end: number }) => {
          try {
            strict.decode(bytes.subarray(b.start, b.end));
            return false;
          } catch {
            return true;
          }
        };
        // The first block holding invalid bytes fails when the reader learns it is complete: at
        // its blank line's ending, or (for a lone CR) at the byte after it, if there is one.
        const firstBad = blocksOf(bytes).blocks.find(isBad);
        const window = new Set<number>();
        if (firstBad) {
          const doneAt = bytes[firstBad.end - 1] === 0x0a ? firstBad.end - 1 : firstBad.end;
          for (let k = 0, from = 0; k < chunks.length; k++) {
            const to = from + chunks[k]!.byteLength;
            if (to > firstBad.endingAt && from <= doneAt) window.add(k);
            from = to;
          }
          if (firstBad.openEnded) window.add(-1);
        } else window.add(-1);
        const fed = feed(BIG, chunks);
        assert.ok(
          window.has(fed.refusedAt),
          `failed at chunk ${fed.refusedAt}; expected one of ${[...window].join(", ")} (fails iff a complete block holds invalid UTF-8, when it completes)`,
        );
        const expectedAt = fed.refusedAt;
        if (expectedAt === -1) return;
        assert.ok(fed.error instanceof InvalidUtf8, `failed with ${String(fed.error)}`);
        for (const more of [utf8("data: fine\n\n"), new Uint8Array()]) {
          let again: unknown;
          try {
            fed.reader.push(more, () => assert.fail("a finished reader handed on an event"));
          } catch (error) {
            again = error;
          }
          assert.ok(again instanceof InvalidUtf8, `after InvalidUtf8, a further push threw ${String(again)}`);
        }
      },
    ),
    fuzz(2000),
  );
});
