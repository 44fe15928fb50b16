import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "../errors/redact.ts";
import { JsonStreamParser } from "./json-stream.ts";
import { LONG_STRING_CHARS, piecesAt } from "./long-strings.ts";

/** Parses `text` as the network would hand it: in 64 KiB pieces. */
function parse(text: string): unknown {
  const parser = new JsonStreamParser(64);
  for (let at = 0; at < text.length; at += 64 * 1024) parser.push(text.slice(at, at + 64 * 1024));
  return parser.end().value;
}

const SECRET = "a-configured-s3cret-value";

test("S4: a long string's pieces are recorded where it stands, and make exactly the string", () => {
  const long = `${"x".repeat(LONG_STRING_CHARS)}é\\"\n${"y".repeat(300_000)}`;
  const doc = parse(JSON.stringify({ content: [{ type: "text", text: long }], short: "s" })) as {
    content: { text: string }[];
    short: string;
  };
  const block = doc.content[0]!;
  assert.equal(block.text, long);
  const pieces = piecesAt(block, "text");
  assert.ok(pieces && pieces.length > 1);
  assert.equal(pieces.join(""), long);
  assert.equal(piecesAt(doc, "short"), undefined, "a short string has none");
  block.text = "replaced";
  assert.equal(piecesAt(block, "text"), undefined, "a value written over has none");
});

test("S4: redaction reads a long string piece by piece: untouched when clean, redacted when a secret straddles two pieces", () => {
  const redactor = new Redactor([SECRET]);
  const clean = parse(JSON.stringify({ text: "x".repeat(2 * LONG_STRING_CHARS) })) as { text: string };
  assert.equal(redactor.redactDocument(clean, piecesAt), clean, "nothing to redact: the same value");
  // The secret starts 5 characters before a 64 KiB chunk boundary.
  const at = 20 * 64 * 1024 - 5;
  const text = `${"x".repeat(at - 9)}${SECRET}${"z".repeat(LONG_STRING_CHARS)}`;
  const dirty = parse(JSON.stringify({ text })) as { text: string };
  const out = redactor.redactDocument(dirty, piecesAt);
  assert.ok(!out.text.includes(SECRET));
  assert.equal(out.text, text.replace(SECRET, "[redacted]"));
});
