import { spawnSync } from "node:child_process";
import { closeSync, openSync, readSync } from "node:fs";
import { createInterface } from "node:readline";
import { configError } from "../errors/failures.ts";
import { terminalLine } from "../errors/terminal-text.ts";

/** The longest answer read: a value for a config file, not a document. */
const MAX_ANSWER_BYTES = 8192;

/**
 * Asks the person at the terminal for one line, without echoing it (the answer is often a token),
 * reading the controlling terminal directly and synchronously: config entries are expanded before
 * any connection or deadline exists. Only called when stdin and stderr are terminals.
 */
export function askOnTerminal(prompt: string): string {
  let fd: number;
  try {
    fd = openSync("/dev/tty", "r");
  } catch (cause) {
    throw configError("input_required", "a value asked for could not be read from the terminal", cause);
  }
  const echo = (on: boolean) =>
    spawnSync("stty", [on ? "echo" : "-echo"], { stdio: [fd, "ignore", "ignore"] });
  process.stderr.write(terminalLine(prompt));
  echo(false);
  try {
    const bytes: number[] = [];
    const one = Buffer.alloc(1);
    while (bytes.length < MAX_ANSWER_BYTES) {
      const n = readSync(fd, one, 0, 1, null);
      if (n === 0 || one[0] === 0x0a || one[0] === 0x0d) break;
      bytes.push(one[0]!);
    }
    return Buffer.from(bytes).toString("utf8");
  } finally {
    echo(true);
    process.stderr.write("\n");
    closeSync(fd);
  }
}

/** Lines typed on the terminal, kept until asked for: a person may type ahead of the question. */
interface TypedLines {
  queue: string[];
  waiting: ((line: string) => void) | undefined;
}
let lines: TypedLines | undefined;

/**
 * Asks for one line on the terminal without blocking the event loop (a server's elicitation arrives
 * while the session is live); the signal abandons the question when the call's budget runs out.
 * The terminal is read from the first question until the process exits.
 */
export function askAsync(prompt: string, signal: AbortSignal): Promise<string> {
  if (!lines) {
    const state: TypedLines = { queue: [], waiting: undefined };
    createInterface({ input: process.stdin, terminal: false }).on("line", (line) => {
      const waiting = state.waiting;
      state.waiting = undefined;
      if (waiting) waiting(line.slice(0, MAX_ANSWER_BYTES));
      else state.queue.push(line.slice(0, MAX_ANSWER_BYTES));
    });
    lines = state;
  }
  const state = lines;
  process.stderr.write(terminalLine(prompt));
  const queued = state.queue.shift();
  if (queued !== undefined) return Promise.resolve(queued);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      state.waiting = undefined;
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    state.waiting = (line) => {
      signal.removeEventListener("abort", onAbort);
      resolve(line);
    };
  });
}
