import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { JsonStreamParser, JsonStreamSyntaxError } from "./json-stream.ts";

/** Parses `text` fed in the pieces `cuts` makes of it; the error if it is refused. */
function streamed(
  text: string,
  cuts: number[],
  maxDepth = 128,
): { value?: unknown; error?: unknown; tooDeep?: boolean } {
  const parser = new JsonStreamParser(maxDepth);
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  try {
    let from = 0;
    for (const c of [...at, text.length]) {
      parser.push(text.slice(from, c));
      from = c;
    }
    const { value, tooDeep } = parser.end();
    return { value, tooDeep };
  } catch (error) {
    return { error };
  }
}

function parsed(text: string): { value?: unknown; error?: unknown } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error };
  }
}

const cutsArb = fc.array(fc.nat(), { maxLength: 12 });

test("well-formed JSON, cut anywhere, gives what JSON.parse gives", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom(undefined, 1, "\t"), cutsArb, (value, space, cuts) => {
      const text = JSON.stringify(value, null, space);
      const ours = streamed(text, cuts);
      assert.equal(ours.error, undefined, text);
      assert.deepStrictEqual(ours.value, JSON.parse(text));
    }),
    { numRuns: 2000 },
  );
});

test("text JSON.parse refuses is refused, and text it takes is taken alike", () => {
  const piece = fc.constantFrom(
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "\\",
    "\\u",
    "00e9",
    "\\uD83D\\uDE00",
    "\\x",
    "a",
    "1",
    "-",
    "0",
    ".",
    "e",
    "+",
    "true",
    "fals",
    "null",
    " ",
    "\n",
    "\u0001",
    "\u00e9",
    '"__proto__"',
    "\ufeff",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 14 }), cutsArb, (pieces, cuts) => {
      const text = pieces.join("");
      const ours = streamed(text, cuts);
      const theirs = parsed(text);
      if (theirs.error) {
        assert.ok(ours.error instanceof JsonStreamSyntaxError, `accepted ${JSON.stringify(text)}`);
      } else {
        assert.equal(ours.error, undefined, `refused ${JSON.stringify(text)}`);
        assert.deepStrictEqual(ours.value, theirs.value);
      }
    }),
    { numRuns: 5000 },
  );
});

test("__proto__ is an own key, as JSON.parse makes it, and never the prototype", () => {
  const { value } = streamed('{"__proto__":{"polluted":1},"a":{"__proto__":[]}}', [3, 9]);
  assert.deepStrictEqual(value, JSON.parse('{"__proto__":{"polluted":1},"a":{"__proto__":[]}}'));
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.equal(({} as { polluted?: number }).polluted, undefined);
});

test("nesting past the bound is not built: an empty container stands for it and tooDeep is reported", () => {
  const deep = `${"[".repeat(10)}"x\\"]"${"]".repeat(10)}`;
  const text = `{"jsonrpc":"2.0","id":7,"result":{"a":${deep}}}`;
  const r = streamed(text, [20, 21, 40], 5);
  assert.equal(r.tooDeep, true);
  assert.deepStrictEqual(r.value, { jsonrpc: "2.0", id: 7, result: { a: [[[[]]]] } });
  assert.equal(streamed(text, [], 64).tooDeep, false);
});

test("a long string split across many pieces is one string, escapes at the seams included", () => {
  const value = `${"x".repeat(100_000)}"\\\n\u00e9\ud83d\ude00${"y".repeat(50_000)}`;
  const text = JSON.stringify({ s: value, t: "\u2028" });
  const cuts = Array.from({ length: 300 }, (_, i) => i * 499 + 7);
  assert.deepStrictEqual(streamed(text, cuts).value, { s: value, t: "\u2028" });
});
