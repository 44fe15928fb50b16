/**
 * The HTTP client the transports use on Node when the caller brings no fetch of their own: the
 * `fetch` call shape over `node:http` (and `node:https`, loaded only for an https URL), with its
 * own keep-alive pool that the transport owning it destroys when it closes.
 *
 * Why not the platform's fetch: on Node 20 the first fetch loads and compiles the whole fetch
 * implementation (tens of milliseconds of CPU in a command that makes a handful of requests), and
 * every request after that builds Headers, Request, Response and web streams around a socket that
 * node:http drives directly. The transports read only a small part of a Response (status, header
 * look-ups, the body read chunk by chunk or cancelled), and that part is what this provides.
 *
 * What it does and does not do, as the transports need it:
 * - Redirects are never followed here: every response, a 3xx included, comes back to the caller
 *   (fetch-policy.ts decides, exactly as it does for `redirect: "manual"`).
 * - No `accept-encoding` is sent, so a server has no reason to compress; a server that compresses
 *   anyway (gzip, deflate, br) is decoded, and the byte ceilings count the decoded bytes, as they
 *   do with fetch.
 * - A URL carrying credentials is refused, as fetch refuses it: credentials travel in headers.
 * - Bodies are strings (every MCP message is one) or absent.
 * - The signal aborts the request and its response body alike.
 * - Cancelling a body that has fully arrived lets its socket go back to the pool, and resolves
 *   once it is back; cancelling one still arriving destroys its socket.
 */
import type { Agent, ClientRequest, request as httpRequest, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import type { FetchFn } from "../options/deps.ts";
import { endsWithSignal } from "./byte-budget.ts";

/**
 * Idle keep-alive sockets are dropped after this long, or a second before the time a server
 * announces in `Keep-Alive: timeout=N` if that is sooner: a request is never sent on a socket the
 * server is about to close.
 */
export const IDLE_SOCKET_MS = 4_000;

type HttpModule = typeof import("node:http");
let httpModule: HttpModule | undefined;

/** node:http, loaded by the first request: a stdio command never pays for it. */
async function loadHttp(): Promise<HttpModule> {
  httpModule ??= await import("node:http");
  return httpModule;
}

/** Header look-ups over node's lower-cased header object. */
class ResponseHeaders {
  readonly #raw: IncomingMessage["headers"];
  constructor(raw: IncomingMessage["headers"]) {
    this.#raw = raw;
  }
  get(name: string): string | null {
    const v = this.#raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(", ") : v;
  }
}

/**
 * A response body read chunk by chunk, in the reader shape the transports use. It carries the
 * signal its request was sent with ([endsWithSignal]): when that aborts, node destroys the request
 * and this body with it, so a read pending on it fails at once.
 */
class ResponseBody {
  readonly #res: IncomingMessage;
  readonly #stream: Readable;
  readonly [endsWithSignal]: AbortSignal | undefined;
  #iterator: AsyncIterator<Uint8Array> | undefined;

  constructor(res: IncomingMessage, stream: Readable, signal: AbortSignal | undefined) {
    this.#res = res;
    this.#stream = stream;
    this[endsWithSignal] = signal;
  }

  getReader() {
    this.#iterator ??= this.#stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    const iterator = this.#iterator;
    return {
      read: async (): Promise<{ done: true; value: undefined } | { done: false; value: Uint8Array }> => {
        const r = await iterator.next();
        return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
      },
      cancel: (_reason?: unknown): Promise<void> => this.cancel(),
      releaseLock: (): void => {},
    };
  }

  cancel(_reason?: unknown): Promise<void> {
    const res = this.#res;
    if (res.complete && this.#stream === res) {
      // Fully arrived: what is buffered is drained and the socket goes back to the pool when the
      // body ends. The promise waits for that end, so a request sent right after it (a
      // notification's 202 and then the next request) finds the socket free instead of opening
      // a connection of its own. Nothing is left to arrive, so the wait is a turn or two.
      if (res.readableEnded || res.destroyed) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => resolve();
        res.once("end", done);
        res.once("close", done);
        res.resume();
      });
    }
    // The rest is not wanted: the connection carrying it is closed.
    if (this.#stream !== res) this.#stream.destroy();
    res.destroy();
    return Promise.resolve();
  }
}

/** The part of fetch's Response the transports (and the authorizer wrapping them) read. */
class NodeResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly redirected = false;
  readonly url: string;
  readonly headers: ResponseHeaders;
  readonly body: ResponseBody;

  constructor(res: IncomingMessage, url: URL, stream: Readable, signal: AbortSignal | undefined) {
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status <= 299;
    this.url = url.href;
    this.headers = new ResponseHeaders(res.headers);
    this.body = new ResponseBody(res, stream, signal);
  }

  /** The whole body, unbounded: for the bench's no-library floor (the transports read under a ceiling). */
  async arrayBuffer(): Promise<ArrayBuffer> {
    const reader = this.body.getReader();
    const parts: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    const joined = Buffer.concat(parts);
    return joined.buffer.slice(joined.byteOffset, joined.byteOffset + joined.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.arrayBuffer());
  }
}

/** Request headers from any of fetch's shapes, as a plain object node:http takes. */
function headerObject(init: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (init === undefined || init === null) return out;
  if (Array.isArray(init)) {
    for (const [k, v] of init) if (k !== undefined && v !== undefined) out[k.toLowerCase()] = v;
  } else if (typeof (init as Headers).forEach === "function") {
    (init as Headers).forEach((v, k) => {
      out[k.toLowerCase()] = v;
    });
  } else {
    for (const [k, v] of Object.entries(init as Record<string, string | undefined>))
      if (v !== undefined) out[k.toLowerCase()] = v;
  }
  return out;
}

/** Decodes a compressed body; the transports' ceilings then count what comes out of it. */
async function decoded(res: IncomingMessage): Promise<Readable> {
  const encoding = (res.headers["content-encoding"] ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return res;
  const zlib = await import("node:zlib");
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.on("error", (e) => decoder.destroy(e));
  decoder.on("error", () => res.destroy());
  return res.pipe(decoder);
}

/**
 * One keep-alive pool and the fetch-shaped function that uses it. `close()` destroys every socket
 * of the pool, in use or idle; a request made after it is refused.
 */
export class NodeHttp {
  #http: Agent | undefined;
  #https: import("node:https").Agent | undefined;
  #closed = false;

  readonly fetch: FetchFn = ((input: string | URL | Request, init?: RequestInit) =>
    this.#fetch(input, init)) as FetchFn;

  close(): void {
    this.#closed = true;
    this.#http?.destroy();
    this.#https?.destroy();
  }

  async #fetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    // Never `instanceof Request`: on Node 20 naming that global loads the whole fetch stack.
    if (typeof input !== "string" && !(input instanceof URL))
      throw new TypeError("the built-in HTTP client takes a URL, not a Request");
    const url = input instanceof URL ? input : new URL(input);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    if (this.#closed) throw new TypeError("the HTTP pool is closed");
    if (url.username !== "" || url.password !== "")
      throw new TypeError("a URL with credentials cannot be requested");
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== "string")
      throw new TypeError("the built-in HTTP client sends string bodies only");
    const headers = headerObject(init.headers);
    if (typeof body === "string") headers["content-length"] = String(Buffer.byteLength(body));
    let send: typeof httpRequest;
    let agent: Agent;
    if (url.protocol === "https:") {
      const https = await import("node:https");
      this.#https ??= guarded(new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }));
      send = https.request as unknown as typeof httpRequest;
      agent = this.#https as unknown as Agent;
    } else if (url.protocol === "http:") {
      const http = await loadHttp();
      send = http.request;
      this.#http ??= guarded(new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }));
      agent = this.#http;
    } else throw new TypeError(`cannot request a ${url.protocol} URL`);
    if (this.#closed) throw new TypeError("the HTTP pool is closed");

    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      let req: ClientRequest;
      try {
        // Node destroys the request when the signal fires, and at once if it already has.
        req = send(url, { method: (init.method ?? "GET").toUpperCase(), headers, agent, signal });
      } catch (error) {
        // Invalid header names or values are refused here, before anything is sent.
        reject(error);
        return;
      }
      req.once("response", resolve);
      // Stays attached for the request's life: a failure after the response (the socket reset
      // mid-body) reaches the body's reader, never the process as an unhandled 'error'.
      req.on("error", reject);
      req.end(body ?? undefined);
    });
    // The same for the response: a reset mid-body is seen by whoever reads it, and by no one else.
    res.on("error", () => {});
    const stream = await decoded(res);
    // A decoder in between is not destroyed with the request in every case: only a plain body
    // is said to end with the signal.
    return new NodeResponse(res, url, stream, stream === res ? signal : undefined) as unknown as Response;
  }
}

/**
 * Every socket the agent creates gets an 'error' listener of its own, for the moments node's HTTP
 * client leaves it without one: between the agent handing a pooled socket to a request and the
 * request taking it (a turn of the event loop), and between a response ending and the socket
 * returning to the pool. A request destroyed in such a moment (its signal fired) destroys the
 * socket with an error that would otherwise end the process. Whoever owns the socket then still
 * sees the failure through its own listeners; this one only keeps it from being unhandled.
 */
function guarded<A extends Agent | import("node:https").Agent>(agent: A): A {
  const create = agent.createConnection.bind(agent) as (...args: unknown[]) => NodeJS.EventEmitter;
  (agent as unknown as { createConnection: (...args: unknown[]) => unknown }).createConnection = (
    ...args: unknown[]
  ) => {
    const socket = create(...args);
    socket.on("error", () => {});
    return socket;
  };
  return agent;
}

/** Whether the built-in client applies: on Node, yes; on Bun the platform's fetch is its native one. */
export function nativeFetchPreferred(): boolean {
  return typeof (process.versions as Record<string, string | undefined>).bun === "string";
}
