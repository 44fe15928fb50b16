import assert from "node:assert/strict";
import { test } from "node:test";
import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { ByteBudget } from "./byte-budget.ts";

test("P2: a byte budget refuses a ceiling that is not a whole number of bytes at construction", () => {
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, 1.5, 2 ** 53]) {
    assert.throws(() => new ByteBudget(bad), RangeError, `ceiling ${bad}`);
  }
});

test("P5: a zero and a large safe ceiling are ceilings like any other", () => {
  const none = new ByteBudget(0);
  none.take(0);
  assert.throws(() => none.take(1), ByteCeilingExceeded);
  const big = new ByteBudget(Number.MAX_SAFE_INTEGER);
  big.take(1024);
  assert.equal(big.seenBytes, 1024);
});
