import { ByteCeilingExceeded } from "./byte-budget.ts";

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
  #failed = false;

  /** `maxLineBytes` may be a function: a shared stream's ceiling follows what is pending on it. */
  constructor(maxLineBytes: number | (() => number)) {
    this.#ceiling = typeof maxLineBytes === "function" ? maxLineBytes : () => maxLineBytes;
    this.#maxLineBytes = this.#ceiling();
  }

  /** Feeds a chunk; calls `onLine` for each complete frame, in order. */
  push(chunk: Uint8Array, onLine: (line: Uint8Array) => void): void {
    if (this.#failed) throw new ByteCeilingExceeded(this.#partBytes, this.#maxLineBytes);
    this.#maxLineBytes = this.#ceiling();
    let start = 0;
    while (start < chunk.byteLength) {
      const nl = chunk.indexOf(LF, start);
      const end = nl === -1 ? chunk.byteLength : nl;
      const piece = chunk.subarray(start, end);
      // A trailing CR belongs to the line ending, not to the frame.
      const pieceBytes =
        nl !== -1 && end > start && chunk[end - 1] === CR ? piece.byteLength - 1 : piece.byteLength;
      if (this.#partBytes + pieceBytes > this.#maxLineBytes) {
        this.#failed = true;
        const observed = this.#partBytes + pieceBytes;
        this.#parts = [];
        throw new ByteCeilingExceeded(observed, this.#maxLineBytes);
      }
      if (nl === -1) {
        if (piece.byteLength > 0) {
          this.#parts.push(piece.slice());
          this.#partBytes += piece.byteLength;
        }
        return;
      }
      const line = this.#take(piece.subarray(0, pieceBytes));
      start = nl + 1;
      if (line.byteLength > 0) onLine(line);
    }
  }

  /** Bytes of an unfinished last frame, held since the last newline. */
  get pendingBytes(): number {
    return this.#partBytes;
  }

  #take(last: Uint8Array): Uint8Array {
    if (this.#parts.length === 0) return last;
    // A CR that ended the previous chunk and turns out to precede LF is part of the line ending.
    this.#parts.push(last);
    let total = this.#partBytes + last.byteLength;
    const out = new Uint8Array(total);
    let offset = 0;
    for (const p of this.#parts) {
      out.set(p, offset);
      offset += p.byteLength;
    }
    this.#parts = [];
    this.#partBytes = 0;
    if (last.byteLength === 0 && total > 0 && out[total - 1] === CR) total -= 1;
    return out.subarray(0, total);
  }
}
