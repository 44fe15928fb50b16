/**
 * The transports an attempt speaks over: one factory per kind, each call a fresh transport (a new
 * process, new HTTP state, a new stream), so nothing crosses from one try to the next (R2).
 */
import { authorizedFetch } from "../auth/authorized-fetch.ts";
import type { FetchFn } from "../options/deps.ts";
import type { ResolvedTarget } from "../options/resolve.ts";
import { LegacySseTransport } from "../transport/legacy-sse.ts";
import { StdioTransport } from "../transport/stdio.ts";
import { StreamableHttpTransport } from "../transport/streamable-http.ts";
import type { Runtime } from "./runtime.ts";

export type StdioTarget = Extract<ResolvedTarget, { kind: "stdio" }>;
export type HttpTarget = Extract<ResolvedTarget, { kind: "http" }>;

/** The HTTP transports' fetch: the caller's, carrying the server's bearer token when auth is on. */
function httpFetch(rt: Runtime): FetchFn {
  const { fetch } = rt.options;
  return rt.authorizer ? authorizedFetch(fetch, rt.authorizer) : fetch;
}

/** A stdio server's process; `maxLineBytes` follows the session's pending requests (P6). */
export function stdioTransport(rt: Runtime, target: StdioTarget, maxLineBytes: () => number): StdioTransport {
  return new StdioTransport({
    command: target.command,
    args: target.args,
    env: target.env,
    cwd: target.cwd,
    stderr: target.stderr,
    inheritEnv: target.inheritEnv,
    maxLineBytes,
    redactor: rt.redactor,
    spawn: rt.options.spawn,
  });
}

export function streamableHttpTransport(rt: Runtime, target: HttpTarget): StreamableHttpTransport {
  const o = rt.options;
  return new StreamableHttpTransport({
    url: target.url,
    headers: target.headers,
    fetch: httpFetch(rt),
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
    fetch: httpFetch(rt),
    redactor: rt.redactor,
    maxEventBytes,
  });
}
