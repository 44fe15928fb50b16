/**
 * The transports an attempt speaks over: one factory per kind, each call a fresh transport (a new
 * process, new HTTP state, a new stream), so nothing crosses from one try to the next (R2). This
 * module has the stdio one; the HTTP ones are in http-transports.ts, which loads only for an
 * HTTP target (attempt-sessions.ts): a stdio connection never compiles the HTTP client, the
 * redirect policy or the SSE parser.
 */
import type { ResolvedTarget } from "../options/resolve.ts";
import { StdioTransport } from "../transport/stdio.ts";
import type { Runtime } from "./runtime.ts";

export type StdioTarget = Extract<ResolvedTarget, { kind: "stdio" }>;
export type HttpTarget = Extract<ResolvedTarget, { kind: "http" }>;

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
