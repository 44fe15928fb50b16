/**
 * The response to one POST that carries host requests: the messages that belong to them, as an
 * SSE stream when the host accepts one, else their replies as one JSON body; it ends once every
 * request is answered. A host that closes it first takes its requests' streams away: on the
 * shared session of 2026-07-28 hosts that cancels them, while a legacy host's disconnect is no
 * cancellation, and later messages take its GET stream.
 */

import type { ServerResponse } from "node:http";
import type { JsonRpcId, JsonRpcMessage } from "../jsonrpc/messages.ts";
import { type Hosted, type Stream, writeEvent } from "./hosted.ts";

export class PostResponse implements Stream {
  readonly #res: ServerResponse;
  readonly #sse: boolean;
  /** The ids of the requests not answered yet. */
  readonly #waiting: Set<string>;
  readonly #collected: JsonRpcMessage[] = [];
  #finished = false;

  /** An SSE response's head goes out at once. */
  constructor(res: ServerResponse, sse: boolean, waiting: Set<string>) {
    this.#res = res;
    this.#sse = sse;
    this.#waiting = waiting;
    if (sse) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.flushHeaders();
    }
  }

  /** Takes the messages of its requests on `hosted`'s session, until answered or closed. */
  serve(hosted: Hosted): void {
    for (const key of this.#waiting) hosted.streams.set(key, this);
    this.#res.once("close", () => {
      if (this.#finished) return;
      this.#finished = true;
      // A modern host closing its response stream cancels the request (2026-07-28); a legacy
      // host's disconnect is not a cancellation, and later messages take the GET stream.
      for (const key of this.#waiting) {
        hosted.streams.delete(key);
        if (hosted.kind === "shared")
          hosted.session.receive({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: key, reason: "the host closed the stream" },
          });
      }
    });
  }

  write(message: JsonRpcMessage): boolean {
    if (this.#finished) return false;
    if (this.#sse) writeEvent(this.#res, message);
    else if (!("method" in message)) this.#collected.push(message);
    else return false;
    return true;
  }

  answered(id: JsonRpcId): void {
    this.#waiting.delete(String(id));
    if (this.#waiting.size === 0) this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#sse) this.#res.end();
    else {
      const payload = this.#collected.length === 1 ? this.#collected[0] : this.#collected;
      this.#res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(payload));
    }
  }
}
