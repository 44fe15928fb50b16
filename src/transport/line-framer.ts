import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into newline-delimited frames (the stdio wire format). Each frame's bytes,
 * without its line ending, may be at most `maxLineBytes`; a longer one throws ByteCeilingExceeded
 * as soon as it is seen, and the framer is finished after that. Blank lines are skipped.
 */
export class LineFramer {
  readonly #ceiling: () => number;
  #maxLineBytes: number;
  #parts: Uint8Array[] = [];
  #partBytes = 0;
  /**
   * A CR that ended a chunk: part of the line ending if an LF comes next, else part of the frame.
   * It is counted only once that is known.
   */
  #heldCr = false;
  #error: ByteCeilingExceeded | undefined;

  /** `maxLineBytes` may be a function: a shared stream's ceiling follows what is pending on it. */
  constructor(maxLineBytes: number | (() => number)) {
    this.#ceiling = typeof maxLineBytes === "function" ? maxLineBytes : () => maxLineBytes;
    this.#maxLineBytes = this.#ceiling();
  }

  /**
   * Feeds a chunk; calls `onLine` for each complete frame, in order. A frame may be a view into
   * `chunk` (no copy when it arrived whole): `onLine` reads it before returning, never keeps it.
   */
  push(chunk: Uint8Array, onLine: (line: Uint8Array) => void): void {
    if (this.#error) throw this.#error;
    this.#maxLineBytes = this.#ceiling();
    let start = 0;
    if (this.#heldCr && chunk.byteLength > 0) {
      this.#heldCr = false;
      if (chunk[0] === LF) {
        this.#finish(new Uint8Array(), onLine);
        start = 1;
      } else this.#add(Uint8Array.of(CR));
    }
    while (start < chunk.byteLength) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        let piece = chunk.subarray(start);
        if (piece[piece.byteLength - 1] === CR) {
          piece = piece.subarray(0, piece.byteLength - 1);
          this.#heldCr = true;
        }
        this.#add(piece);
        return;
      }
      // A CR right before the LF belongs to the line ending, not to the frame.
      const end = nl > start && chunk[nl - 1] === CR ? nl - 1 : nl;
      this.#finish(chunk.subarray(start, end), onLine);
      start = nl + 1;
    }
  }

  /** Bytes of an unfinished last frame, held since the last newline. */
  get pendingBytes(): number {
    return this.#partBytes + (this.#heldCr ? 1 : 0);
  }

  #add(piece: Uint8Array): void {
    this.#check(piece.byteLength);
    if (piece.byteLength === 0) return;
    // A copy: the piece is held past this chunk, and a view would keep the whole chunk alive.
    this.#parts.push(piece.slice());
    this.#partBytes += piece.byteLength;
  }

  /** Refuses the frame held so far plus `bytes` more when that passes the ceiling. */
  #check(bytes: number): void {
    if (this.#partBytes + bytes > this.#maxLineBytes) {
      this.#error = new ByteCeilingExceeded(this.#partBytes + bytes, this.#maxLineBytes);
      this.#parts = [];
      throw this.#error;
    }
  }

  #finish(last: Uint8Array, onLine: (line: Uint8Array) => void): void {
    if (this.#parts.length === 0) {
      // The usual case: the whole frame came in this chunk, so it goes out as it is, uncopied.
      this.#check(last.byteLength);
      if (last.byteLength > 0) onLine(last);
      return;
    }
    this.#add(last);
    const parts = this.#parts;
    const total = this.#partBytes;
    this.#parts = [];
    this.#partBytes = 0;
    if (total === 0) return;
    if (parts.length === 1) {
      onLine(parts[0]!);
      return;
    }
    const out = new Uint8Array(total);
    let offset = 0;
    for (const p of parts) {
      out.set(p, offset);
      offset += p.byteLength;
    }
    onLine(out);
  }
}
