// Property-based fuzzing of raw byte accounting (src/transport/byte-budget.ts): arbitrary chunk
// sizes against arbitrary ceilings, through ByteBudget alone and through a real ReadableStream
// read by readBounded / boundedChunks. Totals at or under the ceiling are accepted whole; the
// first chunk that passes it is refused with the bytes really observed, and the source is
// cancelled (P5, P6).

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ByteCeilingExceeded } from "../../src/errors/byte-ceiling.ts";
import { ByteBudget, boundedChunks, readBounded } from "../../src/transport/byte-budget.ts";
import { concat } from "./chunks.ts";
import { fuzz } from "./fuzz-config.ts";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A pull source over fixed chunks that records how far it was read and whether it was cancelled. */
function source(chunks: readonly Uint8Array[]) {
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled < chunks.length) controller.enqueue(chunks[pulled++]!);
        else controller.close();
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

const chunkList = fc.array(fc.uint8Array({ maxLength: 24 }), { maxLength: 16 });

/** A ceiling near the chunks' total (so the exact boundary comes up often), or anywhere. */
function ceilingFor(total: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: -3, max: 3 }).map((d) => Math.max(0, total + d)),
    fc.integer({ min: 0, max: total + 8 }),
  );
}

const chunksAndCeiling = chunkList.chain((chunks) =>
  ceilingFor(chunks.reduce((n, c) => n + c.byteLength, 0)).map((max) => ({ chunks, max })),
);

/** Index of the first chunk whose bytes take the running total past `max`, and that total. */
function firstOver(chunks: readonly Uint8Array[], max: number): { index: number; observed: number } {
  let total = 0;
  for (let i = 0; i < chunks.length; i++) {
    total += chunks[i]!.byteLength;
    if (total > max) return { index: i, observed: total };
  }
  return { index: -1, observed: total };
}

test("P5: ByteBudget accepts a running total up to exactly its ceiling, refuses the first byte more with observedBytes, and stays spent", () => {
  fc.assert(
    fc.property(
      fc
        .array(fc.nat({ max: 50 }), { maxLength: 20 })
        .chain((sizes) => ceilingFor(sizes.reduce((a, b) => a + b, 0)).map((max) => ({ sizes, max }))),
      ({ sizes, max }: { sizes: number[]; max: number }) => {
        const budget = new ByteBudget(max);
        let total = 0;
        for (const n of sizes) {
          if (total + n <= max) {
            budget.take(n);
            total += n;
            assert.equal(budget.seenBytes, total);
            continue;
          }
          assert.throws(
            () => budget.take(n),
            (e: unknown) =>
              e instanceof ByteCeilingExceeded && e.observedBytes === total + n && e.maxBytes === max,
          );
          // Spent for good: nothing more is accepted, not even zero bytes.
          assert.throws(() => budget.take(0), ByteCeilingExceeded);
          assert.throws(() => budget.take(1), ByteCeilingExceeded);
          return;
        }
      },
    ),
    fuzz(3000),
  );
});

test("P5, P6: readBounded returns the body whole up to exactly the ceiling; one byte more is refused with observedBytes and the source cancelled", async () => {
  await fc.assert(
    fc.asyncProperty(chunksAndCeiling, async ({ chunks, max }) => {
      const src = source(chunks);
      const over = firstOver(chunks, max);
      let outcome: { ok: true; body: Uint8Array } | { ok: false; error: unknown };
      try {
        outcome = {
          ok: true,
          body: await readBounded(src.stream, new ByteBudget(max), new AbortController().signal),
        };
      } catch (error) {
        outcome = { ok: false, error };
      }
      await tick();
      if (over.index === -1) {
        assert.ok(outcome.ok, `refused a ${over.observed}-byte body under a ${max}-byte ceiling`);
        assert.deepEqual(Buffer.from(outcome.body), Buffer.from(concat(chunks)));
        assert.equal(src.cancelled(), false, "a body read to its end is not cancelled");
        return;
      }
      assert.ok(!outcome.ok, `accepted a body over its ${max}-byte ceiling`);
      const e = outcome.error;
      assert.ok(e instanceof ByteCeilingExceeded, `refused with ${String(e)}`);
      assert.equal(
        e.observedBytes,
        over.observed,
        "observedBytes: what was read, the refused chunk included",
      );
      assert.ok(e.observedBytes > max);
      assert.equal(e.maxBytes, max);
      assert.equal(src.pulled(), over.index + 1, "nothing is read after the refused chunk");
      assert.equal(src.cancelled(), true, "the source is cancelled after a refusal");
    }),
    fuzz(1500, 2),
  );
});

test("P6: boundedChunks cancels the source however the loop ends: refusal, abort at any chunk, or the consumer stopping", async () => {
  await fc.assert(
    fc.asyncProperty(
      chunksAndCeiling,
      fc.oneof(
        fc.record({ end: fc.constant("abort" as const), at: fc.nat({ max: 16 }) }),
        fc.record({ end: fc.constant("break" as const), at: fc.nat({ max: 16 }) }),
        fc.record({ end: fc.constant("drain" as const), at: fc.constant(0) }),
      ),
      async ({ chunks, max }, how) => {
        const src = source(chunks);
        const controller = new AbortController();
        const reason = new Error("stop");
        const over = firstOver(chunks, max);
        const got: Uint8Array[] = [];
        let error: unknown;
        try {
          let i = 0;
          for await (const chunk of boundedChunks(src.stream, new ByteBudget(max), controller.signal)) {
            got.push(chunk);
            if (how.end !== "drain" && i === how.at) {
              if (how.end === "abort") controller.abort(reason);
              else break;
            }
            i++;
          }
        } catch (e) {
          error = e;
        }
        await tick();
        // What the consumer saw is always a prefix of the body, within the ceiling.
        const seen = got.reduce((n, c) => n + c.byteLength, 0);
        assert.ok(seen <= max, `handed on ${seen} bytes past a ${max}-byte ceiling`);
        assert.deepEqual(Buffer.from(concat(got)), Buffer.from(concat(chunks)).subarray(0, seen));
        const stoppedEarly = how.end !== "drain" && how.at < got.length;
        if (how.end === "abort" && stoppedEarly) {
          assert.equal(error, reason, "an abort rejects with the signal's reason");
        } else if (over.index !== -1 && !stoppedEarly) {
          assert.ok(error instanceof ByteCeilingExceeded, `ended with ${String(error)}`);
          assert.equal(error.observedBytes, over.observed);
        } else {
          assert.equal(error, undefined);
        }
        const readToEnd = error === undefined && !stoppedEarly;
        assert.equal(src.cancelled(), !readToEnd, readToEnd ? "not cancelled" : "cancelled");
      },
    ),
    fuzz(1500, 2),
  );
});
