/**
 * The end of a stdio server's stderr, for the error that reports its death during establishment:
 * the server's own words (a usage text, a missing variable, a crash) say why far better than "the
 * server closed its output". Kept in a ring of the last bytes while it starts (never more than
 * RING_BYTES, whatever it writes), and turned into at most TAIL_LINES lines and TAIL_BYTES bytes
 * (measured as JSON, so the error record stays small) of sanitized, redacted text (S1, S4).
 */
import type { Redactor } from "./redact.ts";
import { terminalLine } from "./terminal-text.ts";

/** The most lines the tail keeps. */
export const TAIL_LINES = 20;
/** The most bytes the tail takes, measured as the JSON string it is in a record. */
export const TAIL_BYTES = 2048;
/** What the ring keeps of the stream: enough for the tail's lines, however short they turn out. */
export const RING_BYTES = 8192;

/** The last RING_BYTES bytes written to a stream; pushing is all the stream's reader does. */
export class ByteRing {
  #chunks: Buffer[] = [];
  #size = 0;
  /** Whether bytes were dropped from the front: the oldest line kept may be a fragment. */
  #cut = false;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    // Compacted only once twice the ring is held: a chatty server costs one push a chunk.
    if (this.#size > 2 * RING_BYTES) this.#compact();
  }

  #compact(): void {
    const all = Buffer.concat(this.#chunks);
    if (all.length > RING_BYTES) this.#cut = true;
    const kept = all.subarray(Math.max(0, all.length - RING_BYTES));
    this.#chunks = [kept];
    this.#size = kept.length;
  }

  /** What the ring holds, and whether its start was cut off. */
  contents(): { bytes: Buffer; cut: boolean } {
    this.#compact();
    return { bytes: this.#chunks[0] ?? Buffer.alloc(0), cut: this.#cut };
  }
}

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text), "utf8") - 2;

/**
 * The last lines of `text`, at most TAIL_LINES of them and TAIL_BYTES in all (as JSON); a line
 * too long for what is left keeps its end, after `…`. `fragment`: the first line is the cut-off
 * end of a longer one, and is dropped. Lines are taken as they are: sanitize them first.
 */
export function lastLines(lines: readonly string[], fragment = false): string | undefined {
  const usable = (fragment ? lines.slice(1) : lines).map((l) => l.trimEnd());
  while (usable.length > 0 && usable[usable.length - 1] === "") usable.pop();
  const out: string[] = [];
  let budget = TAIL_BYTES;
  for (let i = usable.length - 1; i >= 0 && out.length < TAIL_LINES; i--) {
    const line = usable[i]!;
    const cost = jsonBytes(line) + (out.length > 0 ? 2 : 0);
    if (cost <= budget) {
      out.unshift(line);
      budget -= cost;
      continue;
    }
    // The one line that does not fit whole keeps its end, if enough of it fits to be worth it.
    if (budget < 16) break;
    let end = line.slice(-(budget - 8));
    while (end.length > 0 && jsonBytes(`…${end}`) + (out.length > 0 ? 2 : 0) > budget) end = end.slice(1);
    if (end.length > 0) out.unshift(`…${end}`);
    break;
  }
  while (out.length > 0 && out[0]!.trim() === "") out.shift();
  return out.length > 0 ? out.join("\n") : undefined;
}

/**
 * A frame of a stack trace: `    at f (/srv/app.js:3:9)` (JavaScript, Java, .NET) or
 * `  File "/srv/app.py", line 3, in f` (Python). Records carry no stack traces: the error line
 * above the frames says what went wrong, the frames only where.
 */
const STACK_FRAME = /^\s+at\s+\S|^\s*File "[^"]*", line \d+/;
export const FRAMES_LEFT_OUT = "[stack frames left out]";

/** The lines with each run of stack frames replaced by one FRAMES_LEFT_OUT line. */
function withoutFrames(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (!STACK_FRAME.test(line)) out.push(line);
    else if (out.at(-1) !== FRAMES_LEFT_OUT) out.push(FRAMES_LEFT_OUT);
  }
  return out;
}

/**
 * The tail of what a ring holds: decoded as UTF-8, stack frames left out, each line redacted
 * (every configured secret, URLs, credentials: the rules for messages) and sanitized for a
 * terminal, then bounded. Undefined when the server wrote nothing worth showing.
 */
export function stderrTail(ring: ByteRing, redactor: Redactor): string | undefined {
  const { bytes, cut } = ring.contents();
  if (bytes.length === 0) return undefined;
  const lines = bytes.toString("utf8").split(/\r?\n/);
  // A cut-off first line is dropped before frames are judged: it is only a fragment.
  const whole = cut ? lines.slice(1) : lines;
  return lastLines(withoutFrames(whole).map((line) => terminalLine(redactor.scrub(line))));
}

/** A tail scrubbed once more by a holder that knows more secrets, still within its bounds. */
export function rescrubTail(tail: string, redactor: Redactor): string | undefined {
  return lastLines(withoutFrames(tail.split("\n")).map((line) => terminalLine(redactor.scrub(line))));
}
