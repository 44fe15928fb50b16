/**
 * The bridge on its own stdin/stdout: newline-delimited JSON-RPC from one host. The session lasts
 * until the host closes stdin (or a signal arrives); then the upstream is closed, a stdio
 * target's whole process tree with it. Each line the host sends is bounded: a longer one ends the
 * bridge with a `limit` failure rather than growing without end.
 */

import type { Readable, Writable } from "node:stream";
import { limitError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { decodeFrame } from "../jsonrpc/decode.ts";
import type { JsonRpcMessage } from "../jsonrpc/messages.ts";
import { LineFramer } from "../transport/line-framer.ts";
import { BridgeSession, type BridgeSessionOptions } from "./bridge-session.ts";

/** The longest message a host may send on stdin: tool arguments and sampling answers, not bulk data. */
export const MAX_HOST_MESSAGE_BYTES = 16 * 1024 * 1024;

/** JSON-RPC's code for a message that is not JSON, or not JSON-RPC. */
const PARSE_ERROR = -32700;

export interface StdioBridgeOptions extends Omit<BridgeSessionOptions, "link" | "onFatal"> {
  input: Readable;
  output: Writable;
  /** Ends the bridge (SIGINT, SIGTERM): the same orderly close as the host going away. */
  signal?: AbortSignal;
  maxMessageBytes?: number;
}

/**
 * Serves one host until it goes away. Resolves when stdin ends (or the signal aborts) and the
 * upstream is closed; rejects with the failure that ended the bridge otherwise.
 */
export async function serveStdio(options: StdioBridgeOptions): Promise<void> {
  const { input, output } = options;
  let failure: TetherError | undefined;
  let finish: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const write = (message: JsonRpcMessage) => {
    if (!output.writable) return;
    output.write(`${JSON.stringify(message)}\n`);
  };
  const session = new BridgeSession({
    ...options,
    link: { send: (message) => write(message) },
    onFatal: (error) => {
      failure ??= error;
      finish();
    },
  });
  const limit = options.maxMessageBytes ?? MAX_HOST_MESSAGE_BYTES;
  const framer = new LineFramer(limit);
  const onData = (chunk: Buffer) => {
    try {
      framer.push(chunk, (line) => {
        const decoded = decodeFrame(line);
        if (!decoded.ok) {
          write({ jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: "parse error" } });
          return;
        }
        for (const m of decoded.messages) session.receive(m);
      });
    } catch {
      failure ??= limitError(
        { stage: "call", phase: "call" },
        "host_message_too_large",
        `the host sent a message of more than ${limit} bytes`,
        framer.pendingBytes,
        { maxResponseBytes: limit },
      );
      finish();
    }
  };
  input.on("data", onData);
  input.once("end", finish);
  input.once("close", finish);
  input.once("error", finish);
  output.once("error", finish);
  const onAbort = () => finish();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) finish();
  try {
    await ended;
  } finally {
    input.off("data", onData);
    options.signal?.removeEventListener("abort", onAbort);
    await session.close();
  }
  if (failure) throw failure;
}
