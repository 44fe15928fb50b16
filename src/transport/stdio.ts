import type { ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { closedError, limitError, networkError, protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { ByteRing, stderrTail } from "../errors/stderr-tail.ts";
import type { SendContext, Transport } from "../jsonrpc/channel.ts";
import { decodeFrame } from "../jsonrpc/decode.ts";
import type { JsonRpcMessage } from "../jsonrpc/messages.ts";
import { raceAbort } from "../lifecycle/abort.ts";
import type { SpawnFn } from "../options/deps.ts";
import { type ChildOptions, startChild, stopChild } from "./child-process.ts";
import { LAST_WORDS_MS } from "./grace.ts";
import { LineFramer } from "./line-framer.ts";
import { TransportBase } from "./transport.ts";

export interface StdioTransportOptions extends ChildOptions {
  /** Ceiling for one line (its newline not counted); a function when it follows the pending requests. */
  maxLineBytes: number | (() => number);
  redactor: Redactor;
  spawn?: SpawnFn;
}

/**
 * A server process spoken to over stdin/stdout, one JSON-RPC message per line. This transport
 * owns the process: it starts it, and `close()` stops it exactly once.
 */
export class StdioTransport extends TransportBase implements Transport {
  readonly mode = "stdio" as const;
  readonly #options: StdioTransportOptions;
  #child: ChildProcess | undefined;
  #closing: Promise<void> | undefined;
  #framer: LineFramer;
  /**
   * Settles when stdin drains (or the channel fails): one `drain` listener however many sends
   * wait on a full pipe, so a server that stops reading cannot pile listeners onto its stdin.
   */
  #drained: Promise<void> | undefined;
  /**
   * Whether the next message may be written at once (see `send`): true again after a chunk of
   * replies arrives and after each batch is written.
   */
  #writeNow = true;
  /** `#endTurn` is due at the end of this turn. */
  #flushScheduled = false;
  /** This turn's later messages, written together by `#flush` at its end. */
  #held: string[] = [];
  /** Their length, counted as stdin counts a string it holds (in UTF-16 units). */
  #heldLength = 0;
  /**
   * The last bytes of the server's stderr while it establishes (unless it passes through to
   * ours): its own words when it dies before it is open. Dropped once the connection is open.
   */
  #stderr: ByteRing | undefined;
  /** Whether any message arrived: a server that answered something is not one that failed to start. */
  #answered = false;
  #opened = false;
  /** The wait for a dying server's exit and last stderr bytes (LAST_WORDS_MS at most). */
  #lastWords: NodeJS.Timeout | undefined;
  readonly #endTurn = (stdin: Writable): void => {
    this.#flushScheduled = false;
    this.#flush(stdin);
    this.#writeNow = true;
  };

  /** Writes the held messages as one string; returns `write`'s answer (true: no back-pressure). */
  #flush(stdin: Writable): boolean {
    if (this.#held.length === 0) return true;
    const text = this.#held.length === 1 ? this.#held[0]! : this.#held.join("");
    this.#held = [];
    this.#heldLength = 0;
    // A destroyed stdin loses what it held, as it would lose bytes queued inside it.
    if (stdin.destroyed || stdin.writableEnded) return true;
    return stdin.write(text);
  }

  constructor(options: StdioTransportOptions) {
    super();
    this.#options = options;
    this.#framer = new LineFramer(options.maxLineBytes);
  }

  /** The process id, once started: tests use it to tell fresh attempts apart. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(signal: AbortSignal): Promise<void> {
    const where = { stage: "spawn" as const, phase: "discovery" as const, redactor: this.#options.redactor };
    if (signal.aborted) return Promise.reject(signal.reason);
    let child: ChildProcess;
    const passThrough = this.#options.stderr === "inherit";
    try {
      child = startChild({ ...this.#options, stderr: passThrough ? "inherit" : "pipe" }, this.#options.spawn);
    } catch (cause) {
      return Promise.reject(
        closedError(where, "process_exit", "the server process could not be started", cause),
      );
    }
    this.#child = child;
    child.stdout?.on("data", (chunk: Buffer) => this.#onData(chunk));
    if (!passThrough && child.stderr) {
      const ring = new ByteRing();
      this.#stderr = ring;
      child.stderr.on("data", (chunk: Buffer) => ring.push(chunk));
      child.stderr.on("error", () => {});
    }
    child.stdout?.on("end", () => this.#gone("eof"));
    child.stdin?.on("error", (cause) => this.fail(networkError(this.#where(), cause)));
    child.on("exit", () => this.#gone("process_exit"));
    return new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        child.off("spawn", onSpawn);
        child.off("error", onError);
        signal.removeEventListener("abort", onAbort);
      };
      const onSpawn = () => {
        cleanup();
        child.on("error", (cause) =>
          this.fail(closedError(this.#where(), "process_exit", "the server process failed", cause)),
        );
        resolve();
      };
      const onError = (cause: Error) => {
        cleanup();
        const error = closedError(where, "process_exit", "the server process could not be started", cause);
        this.fail(error);
        reject(error);
      };
      const onAbort = () => {
        cleanup();
        reject(signal.reason);
      };
      child.once("spawn", onSpawn);
      child.once("error", onError);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  async send(message: JsonRpcMessage, ctx: SendContext): Promise<void> {
    if (this.closure) throw this.closure;
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed) throw closedError(this.#where(), "eof", "the server's input is closed");
    // `cancel` when the session gives one: reading `signal` could make an AbortSignal per call.
    const cancel = ctx.cancel ?? ctx.signal;
    if (cancel.aborted) throw cancel.reason;
    const line = `${JSON.stringify(message)}\n`;
    let ok: boolean;
    if (this.#writeNow && this.#held.length === 0) {
      // The first message after a chunk of replies (or after the last batch) goes out at once:
      // a lone call waits for nothing, and schedules nothing.
      this.#writeNow = false;
      ok = stdin.write(line);
    } else {
      // Later ones in the same turn of the event loop (many callers resuming on one chunk of
      // replies) are held and leave as one string at its end: one system call and one wake-up of
      // the server instead of one each. Held text counts towards back-pressure as written text
      // does: past the high-water mark it goes out now, and this send waits for the drain like
      // any other.
      this.#held.push(line);
      this.#heldLength += line.length;
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        process.nextTick(this.#endTurn, stdin);
      }
      if (stdin.writableLength + this.#heldLength < stdin.writableHighWaterMark) return;
      ok = this.#flush(stdin);
    }
    if (ok) return;
    // Back-pressure: wait for the pipe to drain, for the channel to fail, or for the caller.
    this.#drained ??= new Promise<void>((resolve, reject) => {
      const done = () => {
        stdin.off("drain", onDrain);
        unsubscribe();
        this.#drained = undefined;
      };
      const onDrain = () => {
        done();
        resolve();
      };
      const unsubscribe = this.onClose((error) => {
        done();
        reject(error);
      });
      stdin.once("drain", onDrain);
    });
    await raceAbort(this.#drained, ctx.signal);
  }

  /** Established: the server's stderr is no longer kept (it is still read, and dropped). */
  opened(): void {
    this.#opened = true;
    this.#stderr = undefined;
    this.#child?.stderr?.removeAllListeners("data");
    this.#child?.stderr?.resume();
  }

  /**
   * The server closed its output or exited. Once open, that closes the channel at once. While it
   * establishes, the error waits (LAST_WORDS_MS at most) for the process to finish exiting and
   * its stderr to end, so that it can carry the exit status and the server's last words.
   */
  #gone(closure: "eof" | "process_exit"): void {
    if (this.closure || this.#lastWords) return;
    const child = this.#child;
    if (this.#opened || !child) {
      this.fail(this.#closedError(closure));
      return;
    }
    const finish = () => {
      clearTimeout(this.#lastWords);
      child.off("close", finish);
      this.fail(this.#closedError(closure));
    };
    child.once("close", finish);
    this.#lastWords = setTimeout(finish, LAST_WORDS_MS);
  }

  /** The error for a server that closed its output or exited, with what it said before, if it is known. */
  #closedError(closure: "eof" | "process_exit") {
    const child = this.#child;
    const ring = this.#stderr;
    const tail = ring && !this.#opened ? stderrTail(ring, this.#options.redactor) : undefined;
    const status = child?.exitCode ?? null;
    const signal = child?.signalCode ?? null;
    const failed = !this.#opened && !this.#answered && ((status !== null && status !== 0) || signal !== null);
    const message = failed
      ? signal !== null
        ? `the server was ended by ${signal} before it answered`
        : `the server exited with status ${status} before it answered`
      : closure === "eof"
        ? "the server closed its output"
        : "the server process exited";
    return closedError(this.#where(), failed ? "process_exit" : closure, message, undefined, {
      ...(tail !== undefined ? { stderrTail: tail } : {}),
      ...(failed ? { failedAtStart: true } : {}),
    });
  }

  close(reason?: "failure"): Promise<void> {
    this.#closing ??= this.#shutdown(reason !== "failure");
    return this.#closing;
  }

  async #shutdown(polite: boolean): Promise<void> {
    const graceful = polite && !this.closure;
    this.fail(closedError(this.#where(), "closed_by_client", "the client closed the connection"));
    clearTimeout(this.#lastWords);
    const child = this.#child;
    if (!child) return;
    // What this turn still holds (a cancellation notice sent just before close) goes out before
    // stdin ends.
    if (child.stdin) this.#flush(child.stdin);
    child.stdout?.removeAllListeners("data");
    child.stdout?.destroy();
    // Its stderr is read (and dropped) until it is gone, so a last word never meets a closed pipe.
    this.#stderr = undefined;
    child.stderr?.removeAllListeners("data");
    child.stderr?.resume();
    await stopChild(child, graceful, (e) => this.cleanupErrors.push(e));
    child.stderr?.destroy();
    child.removeAllListeners();
    child.stdin?.removeAllListeners();
  }

  #where() {
    return { stage: "call" as const, phase: "call" as const, redactor: this.#options.redactor };
  }

  /** One function for every line, rather than one made per chunk read. */
  readonly #onLine = (line: Uint8Array): void => {
    const decoded = decodeFrame(line);
    // Lines that are not JSON-RPC (a banner, a stray log line) are skipped: stdout is the
    // channel, and one bad line does not say the next is bad.
    if (!decoded.ok) return;
    this.#answered = true;
    for (const m of decoded.messages) this.emitMessage(m, line.byteLength);
  };

  #onData(chunk: Buffer): void {
    if (this.closure) return;
    // A chunk of replies starts a new turn: the first message it prompts goes out at once.
    this.#writeNow = true;
    try {
      this.#framer.push(chunk, this.#onLine);
    } catch (error) {
      if (error instanceof ByteCeilingExceeded) {
        this.fail(
          limitError(
            this.#where(),
            "frame_too_large",
            `a line from the server passed the ${error.maxBytes}-byte ceiling`,
            error.observedBytes,
            { maxBytes: error.maxBytes },
          ),
        );
        void this.close();
        return;
      }
      this.fail(protocolError(this.#where(), "malformed", "the server's output could not be read", error));
      void this.close();
    }
  }
}
