import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "./redact.ts";
import { ByteRing, lastLines, RING_BYTES, stderrTail, TAIL_BYTES, TAIL_LINES } from "./stderr-tail.ts";

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

test("K1: the tail is the last 20 lines, trailing blank lines dropped", () => {
  const lines = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`);
  const tail = lastLines([...lines, "", ""])!.split("\n");
  assert.equal(tail.length, TAIL_LINES);
  assert.equal(tail[0], "line 31");
  assert.equal(tail.at(-1), "line 50");
});

test("K1: the tail stays within 2 KiB as JSON, quotes and backslashes counted; a long line keeps its end", () => {
  const quoted = Array.from({ length: 20 }, () => '"\\'.repeat(200));
  assert.ok(jsonBytes(lastLines(quoted)!) <= TAIL_BYTES);
  const long = `start ${"x".repeat(5000)} the end`;
  const tail = lastLines(["before", long])!;
  assert.ok(jsonBytes(tail) <= TAIL_BYTES);
  assert.match(tail, /^…x+ the end$/);
  assert.equal(lastLines(["", "  "]), undefined);
});

test("S4: a ring that dropped its start drops the cut-off line, so a secret split by the cut never shows", () => {
  const secret = "s3cret-value-abcdef";
  const ring = new ByteRing();
  ring.push(Buffer.from(`key ${secret} end\n`));
  ring.push(Buffer.from(`${"y".repeat(RING_BYTES * 2 - 24)}\nlast words\n`));
  const tail = stderrTail(ring, new Redactor([secret]))!;
  assert.ok(!tail.includes("s3cret") && !tail.includes("abcdef"));
  assert.equal(tail.split("\n").at(-1), "last words");
  const whole = new ByteRing();
  whole.push(Buffer.from(`key ${secret} end\n\u001b[2Jdone\n`));
  assert.equal(stderrTail(whole, new Redactor([secret])), "key [redacted] end\n\\x1b[2Jdone");
});

test("X2: stack frames are left out, each run as one line; the error line above them stays", () => {
  const ring = new ByteRing();
  ring.push(
    Buffer.from(
      'Error: boom\n    at f (/srv/a.js:1:2)\n    at g (/srv/b.js:3:4)\nTraceback (most recent call last):\n  File "/srv/c.py", line 3, in <module>\nValueError: bad\n',
    ),
  );
  assert.equal(
    stderrTail(ring, new Redactor()),
    "Error: boom\n[stack frames left out]\nTraceback (most recent call last):\n[stack frames left out]\nValueError: bad",
  );
});
