/**
 * The socket's framing: one JSON object per line, each line bounded. A peer that sends a longer
 * line, or anything that is not a JSON object, is cut off: a frame ceiling is what keeps a
 * confused or hostile peer from growing our memory without bound.
 */
import type { Socket } from "node:net";

/** The largest frame either side accepts, in bytes (a result bounded by the call ceiling fits). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

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
  maxBytes: number = MAX_FRAME_BYTES,
): void {
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
