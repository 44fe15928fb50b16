// Arbitrary chunkings of a byte sequence, for properties that compare a parser fed in pieces with
// the same parser (or a model) fed everything at once. A chunking is a list of cut positions
// (duplicates allowed, so empty chunks happen) or "bytewise": one byte per chunk, which puts a cut
// inside every multibyte character and between every CR and LF.

import fc from "fast-check";

export type Chunking = readonly number[] | "bytewise";

export const chunkings: fc.Arbitrary<Chunking> = fc.oneof(
  { weight: 6, arbitrary: fc.array(fc.nat(), { maxLength: 24 }) },
  { weight: 1, arbitrary: fc.constant("bytewise" as const) },
);

/** Cuts `bytes` into chunks; cut positions are taken modulo the length, so any list fits any input. */
export function split(bytes: Uint8Array, chunking: Chunking): Uint8Array[] {
  if (chunking === "bytewise") return Array.from(bytes, (b) => Uint8Array.of(b));
  const at = chunking.map((c) => c % (bytes.byteLength + 1)).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const end of at) {
    out.push(bytes.subarray(start, end));
    start = end;
  }
  out.push(bytes.subarray(start));
  return out;
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.byteLength;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

const enc = new TextEncoder();
export const utf8 = (text: string): Uint8Array => enc.encode(text);

/** Characters of every UTF-8 length, so that chunk cuts land inside multibyte sequences. */
export const MULTIBYTE = ["é", "☃", "€", "𝄞", "\u{10FFFF}", "\uFEFF"] as const;

/** Short text mixing ASCII and multibyte characters, never containing CR or LF. */
export const lineText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
      { weight: 2, arbitrary: fc.constantFrom(...MULTIBYTE) },
      { weight: 1, arbitrary: fc.constantFrom(":", " ", "data", "\0") },
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join("").replace(/[\r\n]/g, ""));
