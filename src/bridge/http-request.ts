/**
 * What the bridge reads of a host's HTTP request: its headers, and its body, bounded. A body over
 * the limit is answered 413 and read no further than it takes for the host to see that answer; a
 * body cut off half-way is nothing to act on.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { asMessages, type JsonRpcMessage } from "../jsonrpc/messages.ts";

/**
 * How long, and how many more bytes, a host that sent too large a body may go on sending after
 * the 413 (what it sends is read and dropped) before its connection is cut.
 */
export const REFUSED_BODY_DRAIN_MS = 3_000;
export const REFUSED_BODY_DRAIN_BYTES = 256 * 1024 * 1024;
const TOO_LARGE = "request body too large";

/** The body, at most `max` bytes; a longer one is answered 413 and undefined returned. */
export function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  max: number,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const refuse = () => {
      refused = true;
      chunks.length = 0;
      refuseBody(req, res);
      resolve(undefined);
    };
    const declared = Number(header(req, "content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > max) return refuse();
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > max) return refuse();
      chunks.push(chunk);
    });
    req.once("end", () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    // A request cut off half-way has no body to act on; its response goes nowhere.
    req.once("close", () => {
      if (!req.complete && !refused) {
        refused = true;
        resolve(undefined);
      }
    });
  });
}

/**
 * Answers 413 and closes the connection without hiding the answer. A host that writes its whole
 * body before it reads (most HTTP clients do) meets a reset, not the 413, if the socket closes
 * with its data unread; and node closes it as soon as a `Connection: close` response ends. So the
 * status and text go out at once, the rest of the body is read and dropped (nothing is kept), and
 * the response ends (node then closes the connection) once the body has all arrived; a host still
 * sending after REFUSED_BODY_DRAIN_MS or REFUSED_BODY_DRAIN_BYTES is cut off.
 */
function refuseBody(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(413, {
    "content-type": "text/plain",
    "content-length": String(Buffer.byteLength(TOO_LARGE)),
    connection: "close",
  });
  res.write(TOO_LARGE);
  const socket = req.socket;
  const cut = setTimeout(() => socket.destroy(), REFUSED_BODY_DRAIN_MS);
  cut.unref();
  socket.once("close", () => clearTimeout(cut));
  let dropped = 0;
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > REFUSED_BODY_DRAIN_BYTES) socket.destroy();
  });
  req.once("end", () => {
    clearTimeout(cut);
    res.end();
  });
  req.resume();
}

export function parseMessages(body: Buffer): JsonRpcMessage[] | undefined {
  try {
    return asMessages(JSON.parse(body.toString("utf8")));
  } catch {
    return undefined;
  }
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
