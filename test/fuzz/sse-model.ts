// A reference reading of a Server-Sent Events byte stream, written from the WHATWG rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// to check the SSE reader against. It works on the whole stream at once, so it has no chunking of
// its own to get wrong.
//
// - A line ends at CRLF, LF or CR (CRLF is one ending). A BOM is skipped at the start of the
//   stream only.
// - A blank line ends an event block; the block's bytes run from the end of the previous block
//   through the blank line's whole ending (both bytes of a CRLF), so each event is charged its
//   own framing and nothing else. Blocks are found on the raw bytes, where a stream-start BOM is
//   framing charged to the first block (so a BOM alone on the first line does not end a block;
//   it carries no fields either way).
// - A block whose blank line ends in a lone CR at the very end of the input is "open-ended": the
//   next byte may be the LF of a CRLF, which belongs to the block. A reader with no end-of-stream
//   signal may hold such a block until it sees the next byte, or deliver it at once.
// - Fields: `data` (lines joined with LF), `event` (empty means `message`), `id` (ignored if it
//   holds NUL), `retry` (digits only); a line starting with `:` is a comment; `name` alone is
//   `name` with an empty value; unknown fields are ignored. An event is dispatched only if it had
//   at least one data line. As in eventsource-parser, which the reader builds on, `id` is the id
//   given in the event's own block.
// - Fields take effect when their block is complete: an unfinished block at the end yields nothing.

const LF = 0x0a;
const CR = 0x0d;
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export interface ModelEvent {
  event: string;
  data: string;
  id: string | undefined;
  /** Raw bytes of the event's block, framing included. */
  bytes: number;
  /** Its block's range in the input. */
  block: ModelBlock;
}

export interface ModelBlock {
  start: number;
  /** Just past the blank line's whole ending. */
  end: number;
  /** Where the blank line's ending starts (its CR or LF). */
  endingAt: number;
  /** The blank line ends in a lone CR that is the input's last byte. */
  openEnded: boolean;
}

export interface ModelReading {
  events: ModelEvent[];
  retryMs: number | undefined;
  /** Complete blocks, in order (including those that dispatch nothing). */
  blocks: ModelBlock[];
  /** Bytes after the last complete block. */
  tailBytes: number;
}

/** Splits bytes into lines; each has its content range and where its ending stops. */
function lines(bytes: Uint8Array): { start: number; end: number; next: number }[] {
  const out: { start: number; end: number; next: number }[] = [];
  let start = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const b = bytes[i];
    if (b === LF) {
      out.push({ start, end: i, next: i + 1 });
      start = i + 1;
    } else if (b === CR) {
      const next = bytes[i + 1] === LF ? i + 2 : i + 1;
      out.push({ start, end: i, next });
      start = next;
      i = next - 1;
    }
  }
  return out;
}

const BOM = [0xef, 0xbb, 0xbf];

/** The complete blocks of a stream (each through its blank line's whole ending), and where the rest starts. */
export function blocksOf(bytes: Uint8Array): { blocks: ModelBlock[]; tailStart: number } {
  const blocks: ModelBlock[] = [];
  let blockStart = 0;
  for (const line of lines(bytes)) {
    if (line.end > line.start) continue;
    const openEnded = line.next === bytes.byteLength && bytes[line.end] === CR;
    blocks.push({ start: blockStart, end: line.next, endingAt: line.end, openEnded });
    blockStart = line.next;
  }
  return { blocks, tailStart: blockStart };
}

/**
 * Reads the events and the retry hint of a whole input. With `holdOpenEnd`, an open-ended last
 * block is treated as not yet complete (what a reader that waits for the next byte has seen).
 */
export function readSse(bytes: Uint8Array, holdOpenEnd = false): ModelReading {
  const events: ModelEvent[] = [];
  let retryMs: number | undefined;
  const skip = BOM.every((b, i) => bytes[i] === b) ? BOM.length : 0;
  const found = blocksOf(bytes);
  const last = found.blocks[found.blocks.length - 1];
  const held = holdOpenEnd && last?.openEnded === true;
  const blocks = held ? found.blocks.slice(0, -1) : found.blocks;
  const tailStart = held ? last.start : found.tailStart;
  for (const block of blocks) {
    let event = "";
    let id: string | undefined;
    const data: string[] = [];
    for (const line of lines(bytes.subarray(0, block.end))) {
      if (line.start < block.start) continue;
      // The BOM bytes (never CR or LF) can only sit at the start of the first line.
      const from = line.start === 0 ? skip : line.start;
      if (line.end <= from) continue;
      const text = decoder.decode(bytes.subarray(from, line.end));
      if (text.startsWith(":")) continue;
      const colon = text.indexOf(":");
      const name = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? "" : text.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (name === "data") data.push(value);
      else if (name === "event") event = value;
      else if (name === "id" && !value.includes("\0")) id = value;
      else if (name === "retry" && /^\d+$/.test(value)) retryMs = Number.parseInt(value, 10);
    }
    if (data.length > 0)
      events.push({
        event: event || "message",
        data: data.join("\n"),
        id,
        bytes: block.end - block.start,
        block,
      });
  }
  return { events, retryMs, blocks, tailBytes: bytes.byteLength - tailStart };
}
