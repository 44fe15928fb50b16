/**
 * The listener that serves MCP Apps' documents to their frames: a second loopback listener, so a
 * different port and so a different origin from the explorer's (S9). An app's document is published
 * under a random path made for it (the explorer's token is never part of it, and this listener
 * never reads a cookie), served with the Content-Security-Policy its resource declared as an HTTP
 * header, and only to a request that names this listener's own address (Host: DNS rebinding) and,
 * from a browser, only into a frame (`Sec-Fetch-Dest`). It serves nothing else: no index, no
 * other path, no other method.
 */

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type AppCsp, frameCsp, MAX_APP_HTML_BYTES } from "./resource.ts";

/** Documents kept at once; publishing one more forgets the oldest. */
export const MAX_APP_DOCUMENTS = 64;

/** Headers every response carries, the refusals included. */
const SAFE_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

interface AppDocument {
  body: Buffer;
  csp: string;
}

export interface AppFramesOptions {
  /** The origin of the page that frames the apps (`http://127.0.0.1:PORT`): the only `frame-ancestors`. */
  frameAncestor: string;
  /** The address to listen on: the explorer's own (default 127.0.0.1). */
  host?: string;
  /** Ends the listener when aborted. */
  signal?: AbortSignal;
}

/** A published document: where its frame loads it, and the policy it is served with. */
export interface PublishedApp {
  url: string;
  csp: string;
}

/** One listener, owned by whoever called `listen`; `close()` releases it (idempotent). */
export class AppFrames {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #documents = new Map<string, AppDocument>();
  readonly #frameAncestor: string;
  readonly #host: string;
  #closed: Promise<void> | undefined;
  /** `http://HOST:PORT`, the origin every frame document has (before the sandbox makes it opaque). */
  readonly origin: string;

  private constructor(server: Server, host: string, frameAncestor: string) {
    this.#server = server;
    this.#frameAncestor = frameAncestor;
    const { port } = server.address() as AddressInfo;
    this.#host = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    this.origin = `http://${this.#host}`;
    server.on("request", (req, res) => this.#serve(req, res));
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /** Starts a listener on a free port of `host`. */
  static async listen(options: AppFramesOptions): Promise<AppFrames> {
    options.signal?.throwIfAborted();
    const host = options.host ?? "127.0.0.1";
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const frames = new AppFrames(server, host, options.frameAncestor);
    options.signal?.addEventListener("abort", () => void frames.close(), { once: true });
    return frames;
  }

  /** Publishes an app's HTML under a fresh path; the URL its frame loads, and the policy it gets. */
  publish(html: string, csp: AppCsp): PublishedApp {
    if (this.#closed) throw new Error("the apps listener is closed");
    const body = Buffer.from(html, "utf8");
    if (body.length > MAX_APP_HTML_BYTES) throw new Error(`an app larger than ${MAX_APP_HTML_BYTES} bytes`);
    const id = randomBytes(24).toString("base64url");
    const policy = frameCsp(csp, this.#frameAncestor);
    this.#documents.set(id, { body, csp: policy });
    while (this.#documents.size > MAX_APP_DOCUMENTS) {
      const oldest = this.#documents.keys().next().value as string;
      this.#documents.delete(oldest);
    }
    return { url: `${this.origin}/app/${id}`, csp: policy };
  }

  /** Forgets a published document: its URL answers 404 from now on. */
  revoke(url: string): void {
    const id = /\/app\/([A-Za-z0-9_-]+)$/.exec(url)?.[1];
    if (id) this.#documents.delete(id);
  }

  /** Stops listening, ends every connection, forgets every document. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#documents.clear();
      this.#server.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
    return this.#closed;
  }

  #serve(req: IncomingMessage, res: ServerResponse): void {
    const found = this.#find(req);
    if ("refused" in found) {
      res.writeHead(found.status, { ...SAFE_HEADERS, "content-type": "text/plain; charset=utf-8" });
      res.end(found.refused);
      return;
    }
    res.writeHead(200, {
      ...SAFE_HEADERS,
      "content-type": "text/html; charset=utf-8",
      "content-length": String(found.body.length),
      "content-security-policy": found.csp,
    });
    res.end(req.method === "HEAD" ? undefined : found.body);
  }

  /** The document a request may have, or why not. */
  #find(req: IncomingMessage): AppDocument | { status: number; refused: string } {
    if (req.headers.host !== this.#host)
      return { status: 403, refused: "this listener serves only its own address" };
    if (req.method !== "GET" && req.method !== "HEAD") return { status: 405, refused: "only GET" };
    const dest = req.headers["sec-fetch-dest"];
    if (dest !== undefined && dest !== "iframe")
      return { status: 403, refused: "an app's document loads only in its frame" };
    const id = /^\/app\/([A-Za-z0-9_-]{32})$/.exec(req.url ?? "")?.[1];
    const doc = id === undefined ? undefined : this.#documents.get(id);
    return doc ?? { status: 404, refused: "no such app" };
  }
}
