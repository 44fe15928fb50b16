/**
 * `tether bridge --listen`: the target served over HTTP to any number of hosts.
 *
 * - Streamable HTTP at `/mcp`. A legacy host's `initialize` opens a session of its own (its own
 *   upstream connection, named by `Mcp-Session-Id`), which ends on DELETE, after the idle
 *   timeout, or when its upstream ends. A 2026-07-28 host sends no session: its requests share one
 *   upstream connection, opened on the first and closed with the listener.
 * - The 2024-11-05 HTTP+SSE endpoints for old hosts: `GET /sse` opens a session whose `endpoint`
 *   event names `/messages?sessionId=…` for its POSTs; the session ends with the stream.
 *
 * Every request is checked before anything else: the bearer token (when one is set), the Host
 * header on a loopback listener and the Origin header (DNS-rebinding protection), and the body's
 * size (bounded; more is refused with 413 without reading further).
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { configError, networkError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { isRequest, type JsonObject, type JsonRpcMessage } from "../jsonrpc/messages.ts";
import type { BridgeSessionOptions } from "./bridge-session.ts";
import { type Hosted, type Stream, writeEvent } from "./hosted.ts";
import { guard, type ListenAddress } from "./http-access.ts";
import { header, parseMessages, readBody } from "./http-request.ts";
import { DEFAULT_IDLE_MS, HostSessions } from "./http-sessions.ts";
import { isModernRequest } from "./translate.ts";

export { type ListenAddress, parseListenAddress } from "./http-access.ts";
export { REFUSED_BODY_DRAIN_BYTES, REFUSED_BODY_DRAIN_MS } from "./http-request.ts";
export { DEFAULT_IDLE_MS, MAX_SESSIONS } from "./http-sessions.ts";

/** The largest request body accepted: one JSON-RPC message or batch, never bulk data. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export interface HttpBridgeOptions extends Omit<BridgeSessionOptions, "link" | "onFatal"> {
  address: ListenAddress;
  /** Required on every request as `Authorization: Bearer …` when set. */
  token?: string;
  signal?: AbortSignal;
  idleMs?: number;
  maxBodyBytes?: number;
  /** Told the URLs once the listener is up (port 0 picks a free one). */
  onListening?: (urls: { mcp: string; sse: string }) => void;
}

/**
 * Serves until `signal` aborts, then ends every session (closing their upstreams) and the
 * listener. Rejects when the address cannot be listened on.
 */
export async function listenHttp(options: HttpBridgeOptions): Promise<void> {
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const sessions = new HostSessions(
    { connect: options.connect, redactor: options.redactor, bridgeInfo: options.bridgeInfo },
    options.idleMs ?? DEFAULT_IDLE_MS,
  );

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusedWith = guard(req, options);
    if (refusedWith) {
      res.writeHead(refusedWith.status, refusedWith.headers ?? { "content-type": "text/plain" });
      res.end(refusedWith.text);
      req.resume();
      return;
    }
    const url = new URL(req.url ?? "/", "http://bridge.invalid");
    if (url.pathname === "/mcp") {
      if (req.method === "POST") return postMcp(req, res);
      if (req.method === "GET") return getMcp(req, res);
      if (req.method === "DELETE") return deleteMcp(req, res);
      res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
      return;
    }
    if (url.pathname === "/sse" && req.method === "GET") return getSse(res);
    if (url.pathname === "/messages" && req.method === "POST")
      return postMessages(req, res, url.searchParams.get("sessionId") ?? "");
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  }

  async function postMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, res, maxBody);
    if (body === undefined) return;
    const messages = parseMessages(body);
    if (!messages) {
      jsonError(res, 400, -32700, "parse error");
      return;
    }
    const sessionId = header(req, "mcp-session-id");
    let hosted: Hosted | undefined;
    if (sessionId !== undefined) {
      hosted = sessions.get(sessionId);
      if (hosted?.kind !== "streamable") {
        jsonError(res, 404, -32001, "session not found");
        return;
      }
    } else if (messages.some((m) => isRequest(m) && m.method === "initialize")) {
      if (sessions.full) {
        jsonError(res, 503, -32000, "too many sessions");
        return;
      }
      hosted = sessions.open("streamable");
      res.setHeader("mcp-session-id", hosted.id!);
    } else if (messages.every((m) => !isRequest(m) || isModernRequest(m.params))) {
      hosted = sessions.shared();
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
    const collected: JsonRpcMessage[] = [];
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (sse) res.end();
      else {
        const payload = collected.length === 1 ? collected[0] : collected;
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(payload));
      }
    };
    if (sse) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.flushHeaders();
    }
    const stream: Stream = {
      write: (message) => {
        if (finished) return false;
        if (sse) writeEvent(res, message);
        else if (!("method" in message)) collected.push(message);
        else return false;
        return true;
      },
      answered: (id) => {
        waiting.delete(String(id));
        if (waiting.size === 0) finish();
      },
    };
    for (const key of waiting) hosted.streams.set(key, stream);
    res.once("close", () => {
      if (finished) return;
      finished = true;
      // A modern host closing its response stream cancels the request (2026-07-28); a legacy
      // host's disconnect is not a cancellation, and later messages take the GET stream.
      for (const key of waiting) {
        hosted.streams.delete(key);
        if (hosted.kind === "shared")
          hosted.session.receive({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: key, reason: "the host closed the stream" },
          });
      }
    });
    for (const m of incoming) hosted.session.receive(m);
  }

  function getMcp(req: IncomingMessage, res: ServerResponse): void {
    const hosted = sessions.get(header(req, "mcp-session-id") ?? "");
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

  async function deleteMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = header(req, "mcp-session-id") ?? "";
    if (!sessions.has(id)) {
      res.writeHead(404).end();
      return;
    }
    await sessions.end(id);
    res.writeHead(204).end();
  }

  function getSse(res: ServerResponse): void {
    if (sessions.full) {
      res.writeHead(503, { "content-type": "text/plain" }).end("too many sessions");
      return;
    }
    const hosted = sessions.open("sse");
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: endpoint\ndata: /messages?sessionId=${hosted.id}\n\n`);
    hosted.standalone = res;
    res.once("close", () => void sessions.end(hosted.id!));
  }

  async function postMessages(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const hosted = sessions.get(id);
    if (hosted?.kind !== "sse") {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("session not found");
      return;
    }
    const body = await readBody(req, res, maxBody);
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

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(listenFailure(error));
    server.once("error", onError);
    server.listen(options.address.port, options.address.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : options.address.port;
  const host = options.address.host.includes(":") ? `[${options.address.host}]` : options.address.host;
  options.onListening?.({ mcp: `http://${host}:${port}/mcp`, sse: `http://${host}:${port}/sse` });

  await new Promise<void>((resolve) => {
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  server.close();
  await sessions.close();
  server.closeAllConnections();
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  const body: JsonObject = { jsonrpc: "2.0", id: null, error: { code, message } };
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function listenFailure(error: Error): TetherError {
  const code = (error as { code?: unknown }).code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
    return configError("listen_failed", "the --listen address cannot be listened on", error);
  return networkError({ stage: "config", phase: "discovery" }, error);
}
