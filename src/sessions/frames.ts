/**
 * The socket's framing: one JSON object per line, each line bounded. A peer that sends a longer
 * line, or anything that is not a JSON object, is cut off: a frame ceiling is what keeps a
 * confused or hostile peer from growing our memory without bound.
 */
import type { Socket } from "node:net";
import { piecesAt } from "../jsonrpc/long-strings.ts";

/** The largest frame either side accepts, in bytes, unless a call's own ceiling allows more. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * The largest reply frame for a call whose response may be `maxResponseBytes` long: a result
 * written out again is no longer than the reply it was read from, but for redaction (a secret of
 * 8 characters or more becomes the 10 of `[redacted]`: a quarter more at most) and the frame's
 * own fields. Never below MAX_FRAME_BYTES.
 */
export function replyFrameCeiling(maxResponseBytes: number): number {
  return Math.max(MAX_FRAME_BYTES, maxResponseBytes + Math.ceil(maxResponseBytes / 4) + 64 * 1024);
}

/** A frame: a plain JSON object. Its fields are checked by whoever reads it. */
export type Frame = Record<string, unknown>;

export class FrameTooLarge extends Error {
  override readonly name = "FrameTooLarge";
  constructor(readonly observedBytes: number) {
    super("a session frame passed its ceiling");
  }
}

/**
 * Reads frames from a socket. `onFrame` gets each object in order; `onBad` is told once when a
 * frame is too long or not an object, and the socket is destroyed.
 */
export function readFrames(
  socket: Socket,
  onFrame: (frame: Frame) => void,
  onBad: (error: Error) => void,
  /** The ceiling, asked again for each frame (a command raises it for a call with a larger one). */
  ceiling: number | (() => number) = MAX_FRAME_BYTES,
): void {
  const limit = typeof ceiling === "number" ? () => ceiling : ceiling;
  let maxBytes = limit();
  let parts: Buffer[] = [];
  let held = 0;
  let broken = false;
  const fail = (error: Error) => {
    if (broken) return;
    broken = true;
    parts = [];
    socket.destroy();
    onBad(error);
  };
  socket.on("data", (chunk: Buffer) => {
    let start = 0;
    while (!broken) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        held += chunk.length - start;
        if (held > maxBytes) return fail(new FrameTooLarge(held));
        if (start < chunk.length) parts.push(chunk.subarray(start));
        return;
      }
      const piece = chunk.subarray(start, nl);
      held += piece.length;
      if (held > maxBytes) return fail(new FrameTooLarge(held));
      const line = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      parts = [];
      held = 0;
      maxBytes = limit();
      start = nl + 1;
      if (line.length === 0) continue;
      let frame: unknown;
      try {
        frame = JSON.parse(line.toString("utf8"));
      } catch (cause) {
        return fail(new Error("a session frame was not JSON", { cause }));
      }
      if (typeof frame !== "object" || frame === null || Array.isArray(frame))
        return fail(new Error("a session frame was not an object"));
      onFrame(frame as Frame);
    }
  });
}

/**
 * Writes one frame; false when the socket is gone or the frame is over the ceiling (the reader
 * on the other side would refuse it and drop the connection).
 */
export function writeFrame(socket: Socket, frame: Frame, maxBytes: number = MAX_FRAME_BYTES): boolean {
  if (socket.destroyed || !socket.writable) return false;
  const text = `${JSON.stringify(frame)}\n`;
  if (Buffer.byteLength(text) > maxBytes) return false;
  socket.write(text);
  return true;
}

/**
 * Strings longer than this are written out in slices of about this many characters: small enough
 * that each slice's escaped copy dies young (a scavenge frees it, not a full collection), so
 * writing a 200 MB string leaves no trail of garbage the size of the string.
 */
const SLICE_CHARS = 64 * 1024;
/**
 * A character JSON.stringify changes (a quote, a backslash, a control) or UTF-8 makes longer: any
 * but printable ASCII.
 */
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;
/** A frame whose strings add up to less than this is written whole, as one string. */
const WHOLE_FRAME_CHARS = 1024 * 1024;

/** The characters of every string in a value, keys included: a cheap lower bound of its JSON size. */
function stringChars(value: unknown, depth = 0): number {
  if (typeof value === "string") return value.length;
  if (typeof value !== "object" || value === null || depth > 1_000) return 0;
  let n = 0;
  if (Array.isArray(value)) for (const v of value) n += stringChars(v, depth + 1);
  else for (const [k, v] of Object.entries(value)) n += k.length + stringChars(v, depth + 1);
  return n;
}

/** A value's JSON size in bytes, found without writing out its long plain strings. */
function jsonBytes(value: unknown): number {
  let size = 0;
  for (const piece of jsonPieces(value, 0, true))
    size += typeof piece === "number" ? piece : Buffer.byteLength(piece);
  return size;
}

/** Where to cut a string near `at` without splitting a surrogate pair. */
function cutAt(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const c = text.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/**
 * A value's JSON, as JSON.stringify writes it, in pieces: a long string comes out in slices, so
 * that writing a 200 MB result never holds a second copy of it.
 */
function* jsonPieces(value: unknown, depth = 0, sizing = false): Generator<string | number> {
  if (typeof value === "string") {
    yield* stringPieces([value], sizing);
    return;
  }
  if (typeof value !== "object" || value === null || depth > 1_000) {
    yield JSON.stringify(value) ?? "null";
    return;
  }
  // A long string the parser read in pieces is written from them: never copied whole (long-strings.ts).
  const child = (v: unknown, key: string | number) => {
    const pieces = typeof v === "string" && v.length > SLICE_CHARS ? piecesAt(value, key) : undefined;
    return pieces ? stringPieces(pieces, sizing) : jsonPieces(v, depth + 1, sizing);
  };
  if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      const v = value[i];
      if (v === undefined || typeof v === "function" || typeof v === "symbol") yield "null";
      else yield* child(v, i);
    }
    yield "]";
    return;
  }
  let first = true;
  yield "{";
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    yield `${first ? "" : ","}${JSON.stringify(k)}:`;
    first = false;
    yield* child(v, k);
  }
  yield "}";
}

/**
 * One JSON string from the parts that make it, each cut in slices of SLICE_CHARS. Sizing, a plain
 * slice is counted by its length, with no copy made of it.
 */
function* stringPieces(parts: readonly string[], sizing: boolean): Generator<string | number> {
  if (parts.length === 1 && parts[0]!.length <= SLICE_CHARS) {
    yield JSON.stringify(parts[0]);
    return;
  }
  yield '"';
  for (const part of parts)
    for (let at = 0; at < part.length; ) {
      const end = cutAt(part, at + SLICE_CHARS);
      const slice = at === 0 && end === part.length ? part : part.slice(at, end);
      if (sizing && !NOT_PLAIN.test(slice)) yield slice.length;
      else yield JSON.stringify(slice).slice(1, -1);
      at = end;
    }
  yield '"';
}

/**
 * One side's writes to a session socket, in order. A small frame goes out as one write; a large
 * one (a big result) is sized first, then written in slices, each after the socket drained the
 * one before, so it never exists twice in memory; frames asked for meanwhile wait their turn,
 * so no frame is ever interleaved with another.
 */
export class FrameWriter {
  readonly #socket: Socket;
  #tail: Promise<unknown> = Promise.resolve();
  #streaming = 0;

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  /**
   * Writes one frame; resolves false when the socket is gone or the frame is over `maxBytes`
   * (the reader on the other side would refuse it and drop the connection).
   */
  write(frame: Frame, maxBytes: number = MAX_FRAME_BYTES): Promise<boolean> {
    if (this.#streaming === 0 && stringChars(frame) < WHOLE_FRAME_CHARS)
      return Promise.resolve(writeFrame(this.#socket, frame, maxBytes));
    this.#streaming++;
    const done = this.#tail.then(() => this.#writeLarge(frame, maxBytes));
    this.#tail = done.finally(() => {
      this.#streaming--;
    });
    return done;
  }

  /** Resolves once every frame asked for so far has been written (or dropped). */
  settled(): Promise<void> {
    return this.#tail.then(() => undefined);
  }

  async #writeLarge(frame: Frame, maxBytes: number): Promise<boolean> {
    const socket = this.#socket;
    if (socket.destroyed || !socket.writable) return false;
    if (stringChars(frame) < WHOLE_FRAME_CHARS) return writeFrame(socket, frame, maxBytes);
    if (jsonBytes(frame) + 1 > maxBytes) return false;
    let batch = "";
    for (const piece of jsonPieces(frame)) {
      batch += piece as string;
      if (batch.length < SLICE_CHARS) continue;
      if (!(await this.#send(batch))) return false;
      batch = "";
    }
    return this.#send(`${batch}\n`);
  }

  /** One write, then the wait for the socket to drain; false when it closed instead. */
  #send(text: string): Promise<boolean> {
    const socket = this.#socket;
    if (socket.destroyed || !socket.writable) return Promise.resolve(false);
    if (socket.write(text)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const settle = (ok: boolean) => {
        socket.off("drain", onDrain);
        socket.off("close", onClose);
        resolve(ok);
      };
      const onDrain = () => settle(true);
      const onClose = () => settle(false);
      socket.on("drain", onDrain);
      socket.on("close", onClose);
    });
  }
}
