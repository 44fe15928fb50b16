/**
 * Who may reach the `--listen` face: the address it listens on (a non-loopback one only with
 * `--allow-remote`), and the checks every request passes before anything else: the bearer token
 * when one is set, the Host header on a loopback listener and the Origin header (DNS-rebinding
 * protection).
 */

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { configError } from "../errors/failures.ts";
import { header } from "./http-request.ts";

export interface ListenAddress {
  host: string;
  port: number;
  loopback: boolean;
}

/** `HOST:PORT`, `[V6]:PORT` or `PORT` (loopback); a non-loopback host needs `allowRemote`. */
export function parseListenAddress(text: string, allowRemote: boolean): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text) ?? /^()()(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || !(port >= 0 && port <= 65535))
    throw configError("invalid_option", "--listen takes HOST:PORT (for example 127.0.0.1:8808)");
  const host = m[1] || m[2] || "127.0.0.1";
  const loopback = isLoopbackHost(host);
  if (!loopback && !allowRemote)
    throw configError(
      "remote_listen_refused",
      "--listen on a non-loopback address needs --allow-remote (and a token from --listen-token-env)",
    );
  if (!loopback && isIP(host) === 0 && host !== "0.0.0.0")
    throw configError("invalid_option", "--listen takes an IP address or localhost");
  return { host, port, loopback };
}

function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The checks every request passes first; undefined when it may go on. */
export function guard(
  req: IncomingMessage,
  options: { address: ListenAddress; token?: string },
): { status: number; text: string; headers?: Record<string, string> } | undefined {
  if (options.token !== undefined) {
    const given = /^Bearer\s+(.+)$/i.exec(header(req, "authorization") ?? "")?.[1]?.trim() ?? "";
    const a = Buffer.from(given);
    const b = Buffer.from(options.token);
    if (a.length !== b.length || !timingSafeEqual(a, b))
      return {
        status: 401,
        text: "a bearer token is required",
        headers: { "content-type": "text/plain", "www-authenticate": 'Bearer realm="tether-bridge"' },
      };
  }
  const hostHeader = header(req, "host") ?? "";
  const hostName = hostHeader.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  if (options.address.loopback && !isLoopbackHost(hostName))
    return { status: 403, text: "this listener answers only to a loopback Host" };
  const origin = header(req, "origin");
  if (origin !== undefined && origin !== "null") {
    let allowed = false;
    try {
      const o = new URL(origin);
      const name = o.hostname.replace(/^\[|\]$/g, "");
      allowed = options.address.loopback ? isLoopbackHost(name) : o.host === hostHeader;
    } catch {
      allowed = false;
    }
    if (!allowed) return { status: 403, text: "origin not allowed" };
  } else if (origin === "null") return { status: 403, text: "origin not allowed" };
  return undefined;
}
