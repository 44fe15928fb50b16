import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { flattenBelow, nestsDeeperThan } from "./json-depth.ts";

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`;

/** The nesting depth of a parsed value, by recursion (the test's own measure). */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, child) => Math.max(max, depthOf(child)), 0);
}

test("S8: exactly N levels pass a bound of N; N + 1 levels are refused (arrays, objects, mixed)", () => {
  for (const n of [1, 2, 64, 128]) {
    for (const nest of [arrays, objects]) {
      assert.equal(nestsDeeperThan(nest(n), n), false, `${n} levels within ${n}`);
      assert.equal(nestsDeeperThan(nest(n + 1), n), true, `${n + 1} levels past ${n}`);
    }
    if (n < 3) continue;
    const mixed = `{"jsonrpc":"2.0","id":1,"result":{"v":${arrays(n - 2)}}}`;
    assert.equal(nestsDeeperThan(mixed, n), false);
    assert.equal(nestsDeeperThan(mixed, n - 1), true);
  }
  assert.equal(nestsDeeperThan('"a string"', 0), false, "a scalar has depth 0");
  assert.equal(nestsDeeperThan("[]", 0), true);
});

test("S8: brackets inside strings do not count, whatever the escapes around them", () => {
  const inString = `{"a":"${"[{".repeat(1000)}"}`;
  assert.equal(nestsDeeperThan(inString, 1), false);
  // An escaped quote does not end the string: the brackets after it are still text.
  assert.equal(nestsDeeperThan(`{"a":"\\"${"[".repeat(50)}\\""}`, 1), false);
  // An escaped backslash before a quote does end it: the brackets after it count.
  assert.equal(nestsDeeperThan(`["\\\\",${arrays(3)}]`, 3), true);
  assert.equal(nestsDeeperThan(`["\\\\",${arrays(3)}]`, 4), false);
  // Three backslashes: an escaped backslash, then an escaped quote; the string goes on.
  assert.equal(nestsDeeperThan(`["\\\\\\"[[[[",1]`, 1), false);
  // Unicode escapes of brackets and quotes are text too.
  assert.equal(nestsDeeperThan(`{"a":"\\u005b\\u0022[[["}`, 1), false);
  // Keys are strings as well.
  assert.equal(nestsDeeperThan(`{"[[[[":{"]]]]":1}}`, 2), false);
});

test("S8: the scan agrees with the parsed value's depth for any JSON (property)", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
      const text = JSON.stringify(value);
      const depth = depthOf(value);
      assert.equal(nestsDeeperThan(text, depth), false);
      if (depth > 0) assert.equal(nestsDeeperThan(text, depth - 1), true);
    }),
    { numRuns: 500 },
  );
});

test("S8: a million levels are scanned without recursion, and invalid text never throws", () => {
  assert.equal(nestsDeeperThan(arrays(1_000_000), 128), true);
  assert.equal(nestsDeeperThan("[".repeat(1_000_000), 128), true);
  assert.equal(nestsDeeperThan('["unterminated', 128), false);
  assert.equal(nestsDeeperThan("]]]]}}}}", 0), false);
  assert.equal(nestsDeeperThan("", 0), false);
});

test("S8: flattenBelow empties what opens below the kept levels and leaves the rest as it was", () => {
  assert.equal(flattenBelow(`{"a":[[1]],"b":"[x","c":{"d":{}}}`, 1), `{"a":[],"b":"[x","c":{}}`);
  assert.equal(flattenBelow(`{"a":[[1]],"b":2}`, 2), `{"a":[[]],"b":2}`);
  const deep = `{"jsonrpc":"2.0","id":"q\\"[","result":{"deep":${arrays(100_000)}}}`;
  assert.deepEqual(JSON.parse(flattenBelow(deep, 2)), { jsonrpc: "2.0", id: 'q"[', result: { deep: [] } });
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
      const text = JSON.stringify(value);
      assert.equal(flattenBelow(text, Math.max(depthOf(value), 1)), text);
    }),
    { numRuns: 300 },
  );
});
