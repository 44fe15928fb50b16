/**
 * The message history of a stdio server, read off the wire: a spawn that starts the server as
 * node's own does, and tells a listener each line that goes to the server's stdin or comes from
 * its stdout. The transport reads and writes as it always does (a second `data` listener, a
 * write that looks first); the listener gets at most KEEP characters of a line and its whole
 * size, and whatever it throws is swallowed.
 */
import type { ChildProcess } from "node:child_process";
import { spawn as nodeSpawn } from "node:child_process";
import type { SpawnFn } from "../options/deps.ts";

/** `text` is the line's start (at most KEEP characters), `bytes` its whole size. */
export type WireListener = (dir: "in" | "out", text: string, bytes: number) => void;

/** Characters of one line handed to the listener. */
export const KEEP = 64 * 1024;

/** Splits a byte stream into lines, keeping at most KEEP characters of each. */
class Lines {
  #text = "";
  #bytes = 0;
  readonly #emit: (text: string, bytes: number) => void;
  constructor(emit: (text: string, bytes: number) => void) {
    this.#emit = emit;
  }
  push(chunk: string | Buffer): void {
    let text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n")) {
      this.#add(text.slice(0, nl));
      const line = this.#text.replace(/\r$/, "");
      const bytes = this.#bytes;
      this.#text = "";
      this.#bytes = 0;
      text = text.slice(nl + 1);
      if (line.trim()) this.#emit(line, bytes);
    }
    this.#add(text);
  }
  #add(part: string): void {
    this.#bytes += Buffer.byteLength(part);
    if (this.#text.length < KEEP) this.#text += part.slice(0, KEEP - this.#text.length);
  }
}

function tap(child: ChildProcess, listener: WireListener): void {
  const safe = (dir: "in" | "out") => (text: string, bytes: number) => {
    try {
      listener(dir, text, bytes);
    } catch {
      // The history is not worth a broken connection.
    }
  };
  const incoming = new Lines(safe("in"));
  child.stdout?.on("data", (chunk: Buffer) => incoming.push(chunk));
  const stdin = child.stdin;
  if (stdin) {
    const outgoing = new Lines(safe("out"));
    const write = stdin.write.bind(stdin) as (...args: unknown[]) => boolean;
    stdin.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === "string" || Buffer.isBuffer(chunk)) outgoing.push(chunk);
      return write(chunk, ...rest);
    }) as typeof stdin.write;
  }
}

/** A spawn like `base` (node's by default) whose children's lines `listener` hears. */
export function tappedSpawn(listener: WireListener, base: SpawnFn = nodeSpawn): SpawnFn {
  return ((...args: Parameters<typeof nodeSpawn>) => {
    const child = (base as (...a: Parameters<typeof nodeSpawn>) => ChildProcess)(...args);
    tap(child, listener);
    return child;
  }) as SpawnFn;
}
