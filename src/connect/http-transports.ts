/**
 * The HTTP transports an attempt speaks over (see transports.ts): loaded only for an HTTP target.
 */
import { authorizedFetch } from "../auth/authorized-fetch.ts";
import type { FetchFn } from "../options/deps.ts";
import type { ResolvedTarget } from "../options/resolve.ts";
import { LegacySseTransport } from "../transport/legacy-sse.ts";
import { NodeHttp, nativeFetchPreferred } from "../transport/node-http.ts";
import { StreamableHttpTransport } from "../transport/streamable-http.ts";
import type { Runtime } from "./runtime.ts";

type HttpTarget = Extract<ResolvedTarget, { kind: "http" }>;

/**
 * An HTTP transport's fetch, carrying the server's bearer token when auth is on: the caller's own
 * if they gave one; on Node otherwise a pool of the transport's own (node-http.ts), which the
 * transport releases when it closes; on Bun the platform's.
 */
function httpFetch(rt: Runtime): { fetch: FetchFn; release?: () => void } {
  const caller = rt.options.fetch;
  let base: FetchFn;
  let release: (() => void) | undefined;
  if (caller) base = caller;
  else if (nativeFetchPreferred()) base = globalThis.fetch;
  else {
    const pool = new NodeHttp();
    base = pool.fetch;
    release = () => pool.close();
  }
  return { fetch: rt.authorizer ? authorizedFetch(base, rt.authorizer) : base, release };
}

export function streamableHttpTransport(rt: Runtime, target: HttpTarget): StreamableHttpTransport {
  const o = rt.options;
  return new StreamableHttpTransport({
    url: target.url,
    headers: target.headers,
    ...httpFetch(rt),
    redactor: rt.redactor,
    maxFrameBytes: o.maxFrameBytes,
    listen: o.listen,
    clock: o.clock,
  });
}

/** The 2024-11-05 HTTP+SSE transport; `maxEventBytes` follows the session's pending requests (P6). */
export function sseTransport(
  rt: Runtime,
  target: HttpTarget,
  maxEventBytes: () => number,
): LegacySseTransport {
  return new LegacySseTransport({
    url: target.url,
    headers: target.headers,
    ...httpFetch(rt),
    redactor: rt.redactor,
    maxEventBytes,
  });
}
