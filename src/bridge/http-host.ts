/**
 * `tether bridge --listen`: the target served over HTTP to any number of hosts. This module
 * holds the listener's lifetime: it listens, serves until the signal aborts, then ends every
 * session (closing their upstreams) and the listener. The parts, one job each:
 *
 * - http-access.ts: the listen address, and the checks every request passes first (the bearer
 *   token when one is set, the Host header on a loopback listener, the Origin header).
 * - http-request.ts: a request's headers and its body, bounded (more is refused with 413).
 * - HttpEndpoints (http-endpoints.ts): each request to its endpoint (Streamable HTTP at `/mcp`,
 *   the 2024-11-05 HTTP+SSE pair at `/sse` and `/messages`) and its session.
 * - HostSessions (http-sessions.ts): the sessions, a legacy host's own (ended on DELETE, after the
 *   idle timeout, or when its upstream ends) and the one 2026-07-28 hosts share.
 * - Hosted (hosted.ts): one session and the streams its messages take.
 * - PostResponse (post-response.ts): the response to one POST of host requests.
 */

import { createServer } from "node:http";
import { configError, networkError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { BridgeSessionOptions } from "./bridge-session.ts";
import type { ListenAddress } from "./http-access.ts";
import { HttpEndpoints } from "./http-endpoints.ts";
import { DEFAULT_IDLE_MS, HostSessions } from "./http-sessions.ts";

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
  const sessions = new HostSessions(
    { connect: options.connect, redactor: options.redactor, bridgeInfo: options.bridgeInfo },
    options.idleMs ?? DEFAULT_IDLE_MS,
  );
  const endpoints = new HttpEndpoints(sessions, {
    address: options.address,
    token: options.token,
    maxBody: options.maxBodyBytes ?? MAX_BODY_BYTES,
  });
  const server = createServer((req, res) => {
    endpoints.handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;

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

function listenFailure(error: Error): TetherError {
  const code = (error as { code?: unknown }).code;
  if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL")
    return configError("listen_failed", "the --listen address cannot be listened on", error);
  return networkError({ stage: "config", phase: "discovery" }, error);
}
