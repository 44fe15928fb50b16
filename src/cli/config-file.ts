/**
 * The one bounded read of a config file. Config files sit in places a cloned repository controls
 * (`./.mcp.json`), and the CLI reads them before any deadline exists, so the read is bounded by
 * construction: it never blocks on a FIFO or a device, and never holds more than the bound.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** The largest config file read, in bytes; a larger one is refused unread. */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/** Bytes asked of the file per read call; the whole file never needs one buffer of the bound's size. */
const READ_CHUNK_BYTES = 64 * 1024;

/** Why a file that exists could not be used. */
export type FileProblem = "unreadable" | "not_regular_file" | "too_large" | "invalid_encoding";

export type FileReading =
  | { kind: "absent" }
  | { kind: "text"; text: string }
  | { kind: "broken"; problem: FileProblem; cause?: unknown };

/**
 * Opening never waits: O_NONBLOCK makes a FIFO's open return at once (the fstat below then refuses
 * it), and O_NOCTTY keeps a symlink to a terminal from becoming ours. Symlinks are followed; what
 * counts is the file finally opened, which fstat checks on the descriptor itself.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** Errors that mean "no file here", as opposed to a file we may not or cannot read. */
const ABSENT = new Set(["ENOENT", "ENOTDIR"]);

/**
 * Reads a config file as UTF-8 text when it is a regular file of at most `maxBytes` bytes. The
 * size is checked twice: by fstat before reading, and while reading (at most `maxBytes + 1` bytes
 * are ever asked for), since a file can grow between the two.
 */
export function readConfigText(path: string, maxBytes = CONFIG_FILE_MAX_BYTES): FileReading {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && ABSENT.has(code)) return { kind: "absent" };
    return { kind: "broken", problem: "unreadable", cause };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: "broken", problem: "not_regular_file" };
    if (stat.size > maxBytes) return { kind: "broken", problem: "too_large" };
    const chunks: Buffer[] = [];
    let seen = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, maxBytes + 1 - seen));
      const n = readSync(fd, chunk, 0, chunk.byteLength, null);
      if (n === 0) break;
      if (seen + n > maxBytes) return { kind: "broken", problem: "too_large" };
      chunks.push(n === chunk.byteLength ? chunk : chunk.subarray(0, n));
      seen += n;
    }
    try {
      // A leading byte-order mark (Windows editors write one) is dropped by the decoder.
      return { kind: "text", text: new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks)) };
    } catch {
      return { kind: "broken", problem: "invalid_encoding" };
    }
  } catch (cause) {
    return { kind: "broken", problem: "unreadable", cause };
  } finally {
    closeSync(fd);
  }
}
