/**
 * One HTTP host's session (or the one that sessionless 2026-07-28 hosts share) and the streams
 * its messages may take: what the session says about a host request goes out on that request's
 * open response stream, anything else on the session's standalone stream (the GET stream, or the
 * HTTP+SSE one). On the shared session each host's request ids are aliased, so that two hosts'
 * `1` never meet, and given back on the way out.
 */

import type { ServerResponse } from "node:http";
import { isRequest, type JsonRpcId, type JsonRpcMessage } from "../jsonrpc/messages.ts";
import { BridgeSession, type BridgeSessionOptions, type HostLink } from "./bridge-session.ts";

/** Where one host request's messages go: its POST's response, while it is open. */
export interface Stream {
  /** Whether the stream took the message (a JSON response carries only the reply itself). */
  write(message: JsonRpcMessage): boolean;
  /** The response to this request id went out: the stream may end. */
  answered(id: JsonRpcId): void;
}

let aliasCount = 0;

export class Hosted {
  readonly session: BridgeSession;
  readonly streams = new Map<string, Stream>();
  /** The GET stream (legacy Streamable HTTP) or the HTTP+SSE stream: messages no request owns. */
  standalone: ServerResponse | undefined;
  lastActive = Date.now();
  /** Shared sessionless hosts' ids are rewritten so two hosts' `1` never meet. */
  readonly aliases = new Map<string, JsonRpcId>();
  closed = false;

  constructor(
    options: Omit<BridgeSessionOptions, "link">,
    readonly id: string | undefined,
    readonly kind: "streamable" | "sse" | "shared",
  ) {
    const link: HostLink = { send: (message, related) => this.#send(message, related) };
    this.session = new BridgeSession({ ...options, link });
  }

  /** A sessionless host's request id, made unique across hosts on the shared session. */
  alias(message: JsonRpcMessage): JsonRpcMessage {
    if (isRequest(message)) {
      const key = `h${++aliasCount}`;
      this.aliases.set(key, message.id);
      return { ...message, id: key };
    }
    if ("method" in message && message.method === "notifications/cancelled") {
      const original = message.params?.requestId;
      for (const [key, id] of this.aliases)
        if (id === original) return { ...message, params: { ...message.params, requestId: key } };
    }
    return message;
  }

  #send(message: JsonRpcMessage, related: JsonRpcId | undefined): void {
    const key = related === undefined ? undefined : String(related);
    const stream = key === undefined ? undefined : this.streams.get(key);
    let out = message;
    if (this.kind === "shared" && key !== undefined && this.aliases.has(key)) {
      const original = this.aliases.get(key)!;
      if ("id" in out && out.id !== null && String(out.id) === key) out = { ...out, id: original };
      if (!("method" in out)) this.aliases.delete(key);
    }
    if (stream?.write(out)) {
      if (!("method" in out) && key !== undefined) {
        this.streams.delete(key);
        stream.answered(related!);
      }
      return;
    }
    if (this.standalone && !this.standalone.writableEnded) writeEvent(this.standalone, out);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.standalone && !this.standalone.writableEnded) this.standalone.end();
    await this.session.close();
  }
}

export function writeEvent(res: ServerResponse, message: JsonRpcMessage): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}
