import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ByteCeilingExceeded } from "./byte-budget.ts";

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
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  #pending: EventSourceMessage[] = [];
  #retryMs: number | undefined;
  #parts: Uint8Array[] = [];
  #blockBytes = 0;
  /** Whether the last byte seen ended a line (so a following line ending makes a blank line). */
  #atLineStart = true;
  /** Whether the last byte seen was CR (so an LF right after it is the same line ending). */
  #afterCr = false;
  #failed = false;

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
    if (this.#failed) throw new ByteCeilingExceeded(this.#blockBytes, this.#maxEventBytes);
    this.#maxEventBytes = this.#ceiling();
    let blockStart = 0;
    for (let i = 0; i < chunk.byteLength; i++) {
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
        // A blank line: the block ends here, this line ending included. (An LF completing a CRLF
        // blank line is counted into the next block; the parser treats it as the same ending.)
        this.#emit(chunk.subarray(blockStart, i + 1), onEvent);
        blockStart = i + 1;
        continue;
      }
      this.#atLineStart = true;
    }
    if (blockStart < chunk.byteLength) this.#countInto(chunk.subarray(blockStart));
  }

  #countInto(piece: Uint8Array): void {
    if (this.#blockBytes + piece.byteLength > this.#maxEventBytes) {
      this.#failed = true;
      const observed = this.#blockBytes + piece.byteLength;
      this.#parts = [];
      throw new ByteCeilingExceeded(observed, this.#maxEventBytes);
    }
    this.#parts.push(piece.slice());
    this.#blockBytes += piece.byteLength;
  }

  #emit(piece: Uint8Array, onEvent: (event: SseEvent) => void): void {
    this.#countInto(piece);
    const bytes = this.#blockBytes;
    const block = this.#join();
    this.#parts = [];
    this.#blockBytes = 0;
    let text: string;
    try {
      text = this.#decoder.decode(block);
    } catch {
      this.#failed = true;
      throw new InvalidUtf8("invalid UTF-8 in an event");
    }
    this.#parser.feed(text);
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
