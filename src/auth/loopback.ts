import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { configError } from "../errors/failures.ts";

/** The path the authorization server redirects the browser to. */
export const CALLBACK_PATH = "/callback";

const PAGE = (text: string) => `<!doctype html><meta charset="utf-8"><title>tether</title><p>${text}</p>`;

/**
 * A one-shot loopback redirect receiver (RFC 8252 §7.3) on 127.0.0.1: it takes the first request
 * to the callback path, answers the browser, and hands its query parameters to whoever waits.
 * Other paths get 404. `close()` stops listening and destroys every socket; it is idempotent.
 */
export class LoopbackRedirect {
  readonly redirectUri: string;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #received: Promise<URLSearchParams>;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, port: number, received: Promise<URLSearchParams>) {
    this.#server = server;
    this.redirectUri = `http://127.0.0.1:${port}${CALLBACK_PATH}`;
    this.#received = received;
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  /**
   * Listens on `port`, or on `preferred` if free (where an earlier registration's redirect
   * pointed), else on any free port. An explicitly configured port that is taken is a
   * configuration error.
   */
  static async open(port: number | undefined, preferred: number | undefined): Promise<LoopbackRedirect> {
    let deliver: (params: URLSearchParams) => void = () => {};
    const received = new Promise<URLSearchParams>((resolve) => {
      deliver = resolve;
    });
    let taken = false;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method !== "GET" || url.pathname !== CALLBACK_PATH || taken) {
        res.writeHead(404, { "content-type": "text/plain", connection: "close" }).end("not found");
        return;
      }
      taken = true;
      const failed = url.searchParams.has("error");
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", connection: "close" })
        .end(
          PAGE(
            failed
              ? "Authorization did not complete. You can close this window."
              : "Authorization complete. You can close this window and return to tether.",
          ),
        );
      deliver(url.searchParams);
    });
    const listen = (p: number) =>
      new Promise<number>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.once("error", onError);
        server.listen(p, "127.0.0.1", () => {
          server.off("error", onError);
          resolve((server.address() as AddressInfo).port);
        });
      });
    let bound: number;
    try {
      bound = await listen(port ?? preferred ?? 0);
    } catch (error) {
      if (port !== undefined)
        throw configError("port_in_use", "auth.redirectPort could not be listened on", error);
      bound = await listen(0);
    }
    return new LoopbackRedirect(server, bound, received);
  }

  /** The callback's query parameters; rejects with the signal's reason if it aborts first. */
  callback(signal: AbortSignal): Promise<URLSearchParams> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#received.then((params) => {
        signal.removeEventListener("abort", onAbort);
        resolve(params);
      });
    });
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
      for (const s of this.#sockets) s.destroy();
    });
    return this.#closing;
  }
}
