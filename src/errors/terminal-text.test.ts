import assert from "node:assert/strict";
import { test } from "node:test";
import { terminalBlock, terminalJson, terminalLine } from "./terminal-text.ts";

const ESC = "\x1b";

/** [input, as one line, as a block] */
const TABLE: [string, string, string][] = [
  ["plain text", "plain text", "plain text"],
  ["ünïcödé 日本語 🙂 👩‍💻", "ünïcödé 日本語 🙂 👩‍💻", "ünïcödé 日本語 🙂 👩‍💻"],
  [`${ESC}[2J${ESC}[H`, "\\x1b[2J\\x1b[H", "\\x1b[2J\\x1b[H"],
  [`${ESC}]52;c;ZXZpbA==\x07`, "\\x1b]52;c;ZXZpbA==\\x07", "\\x1b]52;c;ZXZpbA==\\x07"],
  ["\x9b2J and \x9d0;title\x9c", "\\x9b2J and \\x9d0;title\\x9c", "\\x9b2J and \\x9d0;title\\x9c"],
  ["\x85next line", "\\x85next line", "\\x85next line"],
  ["safe\rEVIL", "safe\\x0dEVIL", "safe\\x0dEVIL"],
  ["a\r\nb\nc", "a b c", "a\nb\nc"],
  ["abc\b\b\bxyz", "abc\\x08\\x08\\x08xyz", "abc\\x08\\x08\\x08xyz"],
  ["nul\x00del\x7f", "nul\\x00del\\x7f", "nul\\x00del\\x7f"],
  ["\x0b\x0c", "\\x0b\\x0c", "\\x0b\\x0c"],
  ["a\tb", "a b", "a       b"],
  ["12345678\tx\n\ty", "12345678 x  y", "12345678        x\n        y"],
  ["user\u202Egnp.exe", "user\\u202egnp.exe", "user\\u202egnp.exe"],
  ["\u202A\u202B\u202C\u202D", "\\u202a\\u202b\\u202c\\u202d", "\\u202a\\u202b\\u202c\\u202d"],
  ["\u2066x\u2067y\u2068z\u2069", "\\u2066x\\u2067y\\u2068z\\u2069", "\\u2066x\\u2067y\\u2068z\\u2069"],
  ["line\u2028sep\u2029para", "line\\u2028sep\\u2029para", "line\\u2028sep\\u2029para"],
  // Marks change no embedding level: kept, as right-to-left text uses them.
  ["שלום\u200Eabc\u200F\u061C", "שלום\u200Eabc\u200F\u061C", "שלום\u200Eabc\u200F\u061C"],
  ["back\\slash stays", "back\\slash stays", "back\\slash stays"],
];

test("S1: the sanitizer's rule, as a table of inputs and what a terminal is given", () => {
  for (const [input, line, block] of TABLE) {
    assert.equal(terminalLine(input), line, `line: ${JSON.stringify(input)}`);
    assert.equal(terminalBlock(input), block, `block: ${JSON.stringify(input)}`);
  }
});

/** Whether text holds anything a terminal would act on (LF allowed only where lines are legitimate). */
function unsafe(text: string, lines: boolean): RegExpMatchArray | null {
  const pattern = lines
    ? // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
      /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
    : // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
      /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
  return text.match(pattern);
}

test("S1: no input leaves a control, C1 byte, bidirectional control or lone CR in the output", () => {
  let all = "";
  for (let c = 0; c < 0xa0; c++) all += String.fromCharCode(c);
  for (const c of [0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])
    all += String.fromCharCode(c);
  for (const input of [all, TABLE.map((r) => r[0]).join("")]) {
    assert.equal(unsafe(terminalLine(input), false), null);
    assert.equal(unsafe(terminalBlock(input), true), null);
    assert.ok(!/\r/.test(terminalBlock(input)));
  }
  // The OSC 8 hyperlink shows its target instead of hiding it behind the text.
  const link = `${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`;
  assert.equal(terminalLine(link), "\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\");
});

test("S1: JSON for a terminal is exact JSON with C1, DEL and bidirectional controls escaped", () => {
  const value = {
    "k\u202Eey": ["\x1b[2J", "\x9b31m", "\x7f", "a\u2066b\u2069", "\u2028\u2029", "\r\n", "日本 🙂"],
    n: 1,
    nested: { ok: true, nil: null },
  };
  for (const indent of [undefined, 2]) {
    const text = terminalJson(value, indent);
    assert.deepEqual(JSON.parse(text), value);
    assert.equal(unsafe(text, indent !== undefined), null);
    assert.match(text, /\\u202e/);
    assert.match(text, /\\u009b/);
  }
  assert.equal(terminalJson(undefined), "null");
});
