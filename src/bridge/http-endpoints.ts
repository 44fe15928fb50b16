/**
 * The endpoints of the `--listen` face: each HTTP request, once past the access checks, to the
 * endpoint it names and the session it belongs to. Streamable HTTP at `/mcp`: POST carries
 * messages (a legacy host's `initialize` opens a session of its own, a 2026-07-28 host's
 * enveloped requests go to the shared one), GET opens a session's standalone stream, DELETE ends
 * it. The 2024-11-05 HTTP+SSE pair for old hosts: `GET /sse` opens a session whose `endpoint`
 * event names `/messages?sessionId=…` for its POSTs.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { isRequest, type JsonObject } from "../jsonrpc/messages.ts";
import type { Hosted } from "./hosted.ts";
import { guard, type ListenAddress } from "./http-access.ts";
import { header, parseMessages, readBody } from "./http-request.ts";
import type { HostSessions } from "./http-sessions.ts";
import { PostResponse } from "./post-response.ts";
import { isModernRequest } from "./translate.ts";

export interface EndpointOptions {
  address: ListenAddress;
  /** Required on every request as `Authorization: Bearer …` when set. */
  token?: string;
  /** The largest request body read. */
  maxBody: number;
}

export class HttpEndpoints {
  readonly #sessions: HostSessions;
  readonly #o: EndpointOptions;

  constructor(sessions: HostSessions, options: EndpointOptions) {
    this.#sessions = sessions;
    this.#o = options;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusedWith = guard(req, this.#o);
    if (refusedWith) {
      res.writeHead(refusedWith.status, refusedWith.headers ?? { "content-type": "text/plain" });
      res.end(refusedWith.text);
      req.resume();
      return;
    }
    const url = new URL(req.url ?? "/", "http://bridge.invalid");
    if (url.pathname === "/mcp") {
      if (req.method === "POST") return this.#postMcp(req, res);
      if (req.method === "GET") return this.#getMcp(req, res);
      if (req.method === "DELETE") return this.#deleteMcp(req, res);
      res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
      return;
    }
    if (url.pathname === "/sse" && req.method === "GET") return this.#getSse(res);
    if (url.pathname === "/messages" && req.method === "POST")
      return this.#postMessages(req, res, url.searchParams.get("sessionId") ?? "");
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  }

  async #postMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, res, this.#o.maxBody);
    if (body === undefined) return;
    const messages = parseMessages(body);
    if (!messages) {
      jsonError(res, 400, -32700, "parse error");
      return;
    }
    const sessionId = header(req, "mcp-session-id");
    let hosted: Hosted | undefined;
    if (sessionId !== undefined) {
      hosted = this.#sessions.get(sessionId);
      if (hosted?.kind !== "streamable") {
        jsonError(res, 404, -32001, "session not found");
        return;
      }
    } else if (messages.some((m) => isRequest(m) && m.method === "initialize")) {
      if (this.#sessions.full) {
        jsonError(res, 503, -32000, "too many sessions");
        return;
      }
      hosted = this.#sessions.open("streamable");
      res.setHeader("mcp-session-id", hosted.id!);
    } else if (messages.every((m) => !isRequest(m) || isModernRequest(m.params))) {
      hosted = this.#sessions.shared();
    } else {
      jsonError(res, 400, -32600, "no session: send initialize first, or the 2026-07-28 _meta envelope");
      return;
    }
    hosted.lastActive = Date.now();
    const requests = messages.filter(isRequest);
    const target = hosted;
    const incoming = target.kind === "shared" ? messages.map((m) => target.alias(m)) : messages;
    if (requests.length === 0) {
      for (const m of incoming) hosted.session.receive(m);
      res.writeHead(202).end();
      return;
    }
    const sse = (header(req, "accept") ?? "").includes("text/event-stream");
    const waiting = new Set(incoming.filter(isRequest).map((r) => String(r.id)));
    new PostResponse(res, sse, waiting).serve(hosted);
    for (const m of incoming) hosted.session.receive(m);
  }

  #getMcp(req: IncomingMessage, res: ServerResponse): void {
    const hosted = this.#sessions.get(header(req, "mcp-session-id") ?? "");
    if (hosted?.kind !== "streamable") {
      res.writeHead(hosted ? 404 : 405, { allow: "POST" }).end();
      return;
    }
    if (hosted.standalone && !hosted.standalone.writableEnded) {
      res.writeHead(409, { "content-type": "text/plain" }).end("a stream is already open for this session");
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    hosted.standalone = res;
    hosted.lastActive = Date.now();
    res.once("close", () => {
      if (hosted.standalone === res) hosted.standalone = undefined;
    });
  }

  async #deleteMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = header(req, "mcp-session-id") ?? "";
    if (!this.#sessions.has(id)) {
      res.writeHead(404).end();
      return;
    }
    await this.#sessions.end(id);
    res.writeHead(204).end();
  }

  #getSse(res: ServerResponse): void {
    if (this.#sessions.full) {
      res.writeHead(503, { "content-type": "text/plain" }).end("too many sessions");
      return;
    }
    const hosted = this.#sessions.open("sse");
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: endpoint\ndata: /messages?sessionId=${hosted.id}\n\n`);
    hosted.standalone = res;
    res.once("close", () => void this.#sessions.end(hosted.id!));
  }

  async #postMessages(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const hosted = this.#sessions.get(id);
    if (hosted?.kind !== "sse") {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("session not found");
      return;
    }
    const body = await readBody(req, res, this.#o.maxBody);
    if (body === undefined) return;
    const messages = parseMessages(body);
    if (!messages) {
      res.writeHead(400, { "content-type": "text/plain" }).end("invalid JSON-RPC");
      return;
    }
    hosted.lastActive = Date.now();
    res.writeHead(202, { "content-type": "text/plain" }).end("Accepted");
    for (const m of messages) hosted.session.receive(m);
  }
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  const body: JsonObject = { jsonrpc: "2.0", id: null, error: { code, message } };
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
