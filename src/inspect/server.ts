/**
 * `tether inspect`'s web server: node:http on loopback (unless widened on purpose), every
 * request judged by Access first (S9), then the page, its two assets, the JSON API and the event
 * stream. Request bodies are bounded; closing ends every connection the explorer made and every
 * process they started.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { configError } from "../errors/failures.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { Access, PAGE_CSP, plain, SAFE_HEADERS } from "./access.ts";
import { BadRequest, failure, OPS } from "./api.ts";
import { AppFrames } from "./apps/frames.ts";
import { Connection, type ExplorerHost } from "./connection.ts";
import { Feed } from "./feed.ts";

/** A request body past this is refused (413). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ExplorerOptions {
  host: ExplorerHost;
  /** Where the built page is (page.js, page.css). */
  assetDir: string;
  /** The address to listen on (default 127.0.0.1) and the port (default: a free one). */
  address?: string;
  port?: number;
}

export interface Explorer {
  /** The URL to open, with this launch's token. */
  readonly url: string;
  /** The token alone (for tools that send it as a bearer token). */
  readonly token: string;
  /** Starts connecting to a server now (the page shows the attempt as it goes); never rejects. */
  connect(id: string): void;
  /** Ends every connection (and the processes they started), the streams, and the listener. */
  close(): Promise<void>;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>tether inspect</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/page.css">
<script type="module" src="/page.js"></script></head><body><div id="app"></div></body></html>
`;

const TYPES: Record<string, string> = {
  "/page.js": "text/javascript; charset=utf-8",
  "/page.css": "text/css; charset=utf-8",
};

export async function startExplorer(o: ExplorerOptions): Promise<Explorer> {
  const assets = new Map<string, Buffer>();
  for (const path of Object.keys(TYPES)) assets.set(path, readFileSync(join(o.assetDir, path.slice(1))));
  const stop = new AbortController();
  const feed = new Feed();
  const connections = new Map<string, Connection>();
  for (const choice of o.host.servers())
    connections.set(choice.id, new Connection(choice, o.host, feed, stop.signal));
  const server = createServer();
  const address = o.address ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenFailure(error));
    server.once("error", failed);
    server.listen(o.port ?? 0, address, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPort = `${address.includes(":") ? `[${address}]` : address}:${port}`;
  const access = new Access(hostPort);
  // MCP Apps' documents come from a listener of their own: another origin, framed by this page only.
  const apps = await AppFrames.listen({
    frameAncestor: `http://${hostPort}`,
    host: address,
    signal: stop.signal,
  }).catch((error: unknown) => {
    server.close();
    throw error;
  });
  const pageHeaders = { ...SAFE_HEADERS, "content-security-policy": `${PAGE_CSP}; frame-src ${apps.origin}` };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const verdict = access.judge(req);
    if (verdict.ok === false) return plain(res, verdict.status, `${verdict.status}: ${verdict.why}\n`);
    if (verdict.ok === "trade") {
      res.writeHead(303, { ...SAFE_HEADERS, location: verdict.location, "set-cookie": access.cookie() });
      res.end();
      return;
    }
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method === "GET" && path === "/") {
      res.writeHead(200, { ...pageHeaders, "content-type": "text/html; charset=utf-8" });
      res.end(PAGE);
      return;
    }
    const asset = assets.get(path);
    if (req.method === "GET" && asset) {
      res.writeHead(200, { ...SAFE_HEADERS, "content-type": TYPES[path]! });
      res.end(asset);
      return;
    }
    if (req.method === "GET" && path === "/api/events") return feed.open(res);
    if (req.method === "GET" && path === "/api/servers")
      return json(res, 200, { servers: [...connections.values()].map((c) => c.summary()) });
    const op = path.startsWith("/api/") ? path.slice(5) : "";
    if (req.method !== "POST" || !Object.hasOwn(OPS, op)) return plain(res, 404, "404: not found\n");
    // A JSON body only: a form post from another page cannot send one without asking first.
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? ""))
      return plain(res, 415, "415: send application/json\n");
    const body = await readBody(req, res);
    if (body === undefined) return;
    const conn = typeof body.server === "string" ? connections.get(body.server) : undefined;
    if (!conn) return json(res, 400, { error: { message: "no such server" } });
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableEnded) gone.abort(new Error("the page went away"));
    });
    const signal = AbortSignal.any([gone.signal, stop.signal]);
    try {
      json(res, 200, { ok: true, ...(await OPS[op]!({ conn, body, signal, apps })) });
    } catch (error) {
      if (error instanceof BadRequest) return json(res, 400, { error: { message: error.message } });
      json(res, 200, { ok: false, ...failure(conn, error, (e) => o.host.errorRecord(e)) });
    }
  };
  server.on("request", (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) plain(res, 500, "500: internal\n");
      else res.destroy();
    });
  });

  let closing: Promise<void> | undefined;
  return {
    url: access.url(),
    token: access.token,
    connect: (id) => void connections.get(id)?.connect(),
    close: () => {
      closing ??= (async () => {
        stop.abort(new Error("the explorer is closing"));
        feed.close();
        await Promise.all([...connections.values()].map((c) => c.disconnect()));
        await apps.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

/** A port in use, an address not ours or not allowed: the user's to change (config, exit 2). */
function listenFailure(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
    return configError("listen_failed", "the explorer cannot listen on the --host and --port given", error);
  return error;
}

function json(res: ServerResponse, status: number, doc: JsonObject): void {
  res.writeHead(status, { ...SAFE_HEADERS, "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(doc));
}

/** The request's JSON object, at most MAX_BODY_BYTES; else the response is sent and undefined returned. */
async function readBody(req: IncomingMessage, res: ServerResponse): Promise<JsonObject | undefined> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    plain(res, 413, "413: body too large\n", { connection: "close" });
    req.destroy();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      plain(res, 413, "413: body too large\n", { connection: "close" });
      req.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  try {
    const doc: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (typeof doc === "object" && doc !== null && !Array.isArray(doc)) return doc as JsonObject;
  } catch {}
  json(res, 400, { error: { message: "the body must be a JSON object" } });
  return undefined;
}
