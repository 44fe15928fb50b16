import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";

const LF = 0x0a;
const CR = 0x0d;

export interface SseEvent {
  /** The event type; `message` when the server named none. */
  event: string;
  data: string;
  id: string | undefined;
  /** Raw bytes of this event's block as received, framing included. */
  bytes: number;
}

export class InvalidUtf8 extends Error {
  override readonly name = "InvalidUtf8";
}

/**
 * A Server-Sent Events reader with a byte ceiling per event. Bytes are split into event blocks
 * (up to a blank line) here, where they can be counted; each whole block is then handed to
 * eventsource-parser, which owns the field syntax. An event block over `maxEventBytes` throws
 * ByteCeilingExceeded as soon as it is seen and the reader is finished after that.
 */
export class SseReader {
  readonly #ceiling: () => number;
  #maxEventBytes: number;
  readonly #parser: ReturnType<typeof createParser>;
  // The BOM is the stream's business, not each block's: it is stripped once, at the very start.
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  #first = true;
  #pending: EventSourceMessage[] = [];
  #retryMs: number | undefined;
  #parts: Uint8Array[] = [];
  #blockBytes = 0;
  /** Whether the last byte seen ended a line (so a following line ending makes a blank line). */
  #atLineStart = true;
  /** Whether the last byte seen was CR (so an LF right after it is the same line ending). */
  #afterCr = false;
  /**
   * A block whose blank line ended in CR at the end of a chunk: whether an LF completes that line
   * ending (and belongs to this event's bytes) is known only when the next byte arrives.
   */
  #held = false;
  /** The first failure; the reader is finished after it and repeats it. */
  #error: Error | undefined;

  /** `maxEventBytes` may be a function: a shared stream's ceiling follows what is pending on it. */
  constructor(maxEventBytes: number | (() => number)) {
    this.#ceiling = typeof maxEventBytes === "function" ? maxEventBytes : () => maxEventBytes;
    this.#maxEventBytes = this.#ceiling();
    this.#parser = createParser({
      onEvent: (e) => this.#pending.push(e),
      onRetry: (ms) => {
        this.#retryMs = ms;
      },
    });
  }

  /** The last `retry:` hint the server sent, in ms. */
  get retryMs(): number | undefined {
    return this.#retryMs;
  }

  /** Feeds raw bytes; calls `onEvent` for each complete event, in order. */
  push(chunk: Uint8Array, onEvent: (event: SseEvent) => void): void {
    if (this.#error) throw this.#error;
    try {
      this.#push(chunk, onEvent);
    } catch (error) {
      this.#error = error as Error;
      this.#parts = [];
      throw error;
    }
  }

  /** The stream ended: delivers an event whose last line ending was a CR at the very end. */
  end(onEvent: (event: SseEvent) => void): void {
    if (this.#error || !this.#held) return;
    this.#held = false;
    this.#emit(new Uint8Array(), onEvent, true);
  }

  #push(chunk: Uint8Array, onEvent: (event: SseEvent) => void): void {
    this.#maxEventBytes = this.#ceiling();
    let blockStart = 0;
    if (this.#held && chunk.byteLength > 0) {
      this.#held = false;
      if (chunk[0] === LF) {
        this.#emit(chunk.subarray(0, 1), onEvent, false);
        blockStart = 1;
      } else this.#emit(new Uint8Array(), onEvent, true);
      this.#afterCr = false;
    }
    for (let i = blockStart; i < chunk.byteLength; i++) {
      const b = chunk[i];
      if (b !== LF && b !== CR) {
        // Jump to the next line ending: most bytes are payload.
        let next = i + 1;
        while (next < chunk.byteLength && chunk[next] !== LF && chunk[next] !== CR) next++;
        this.#atLineStart = false;
        this.#afterCr = false;
        i = next - 1;
        continue;
      }
      if (b === LF && this.#afterCr) {
        this.#afterCr = false;
        continue;
      }
      this.#afterCr = b === CR;
      if (this.#atLineStart) {
        // A blank line: the block ends here, its line ending included (both bytes of a CRLF).
        if (b === CR && i + 1 === chunk.byteLength) {
          this.#countInto(chunk.subarray(blockStart));
          this.#held = true;
          return;
        }
        const end = b === CR && chunk[i + 1] === LF ? i + 2 : i + 1;
        this.#emit(chunk.subarray(blockStart, end), onEvent, b === CR && end === i + 1);
        if (end === i + 2) this.#afterCr = false;
        blockStart = end;
        i = end - 1;
        continue;
      }
      this.#atLineStart = true;
    }
    if (blockStart < chunk.byteLength) this.#countInto(chunk.subarray(blockStart));
  }

  #countInto(piece: Uint8Array): void {
    if (this.#blockBytes + piece.byteLength > this.#maxEventBytes) {
      const observed = this.#blockBytes + piece.byteLength;
      throw new ByteCeilingExceeded(observed, this.#maxEventBytes);
    }
    if (piece.byteLength === 0) return;
    this.#parts.push(piece.slice());
    this.#blockBytes += piece.byteLength;
  }

  /** `completeCr`: the block ends in a lone CR line ending; the parser is told it is complete. */
  #emit(piece: Uint8Array, onEvent: (event: SseEvent) => void, completeCr: boolean): void {
    this.#countInto(piece);
    const bytes = this.#blockBytes;
    const block = this.#join();
    this.#parts = [];
    this.#blockBytes = 0;
    let text: string;
    try {
      text = this.#decoder.decode(block);
    } catch {
      throw new InvalidUtf8("invalid UTF-8 in an event");
    }
    if (this.#first) {
      this.#first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.#parser.feed(completeCr ? `${text}\n` : text);
    const events = this.#pending;
    this.#pending = [];
    for (const e of events) onEvent({ event: e.event ?? "message", data: e.data, id: e.id, bytes });
  }

  #join(): Uint8Array {
    if (this.#parts.length === 1) return this.#parts[0]!;
    const out = new Uint8Array(this.#blockBytes);
    let offset = 0;
    for (const p of this.#parts) {
      out.set(p, offset);
      offset += p.byteLength;
    }
    return out;
  }
}
