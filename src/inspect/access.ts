/**
 * Who may reach the explorer (S9): the request must name exactly the address served (Host), come
 * from no other origin (Origin), and carry this launch's secret, as the cookie the page got for
 * its token or as `Authorization: Bearer`. The token in the printed URL is traded once for the
 * cookie. Every response carries the same protective headers; nothing served without the secret
 * names it.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** The page's Content-Security-Policy: its own scripts and styles only, no framing by anyone. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; " +
  "form-action 'none'";

/** Headers every response carries, the 401 and 403 included. */
export const SAFE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": PAGE_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export type Verdict =
  | { ok: true }
  | { ok: false; status: 401 | 403; why: string }
  /** The URL's token, right: set the cookie and send the browser to the same path without it. */
  | { ok: "trade"; location: string };

const secretEqual = (given: string, want: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The launch's secrets and the one place that judges a request against them. */
export class Access {
  /** The secret the printed URL carries. */
  readonly token = randomBytes(24).toString("base64url");
  /** What the cookie holds once the token is traded: another value, so the URL's never lingers. */
  readonly #cookieValue = randomBytes(24).toString("base64url");
  readonly #host: string;
  readonly #origin: string;
  readonly #cookieName: string;

  /** `host` is the exact Host header served (`127.0.0.1:PORT`). */
  constructor(host: string) {
    this.#host = host;
    this.#origin = `http://${host}`;
    // Cookies are shared between ports of one host: each launch names its own.
    this.#cookieName = `tether_inspect_${host.replace(/[^A-Za-z0-9]/g, "_")}`;
  }

  /** The URL to print and open. */
  url(): string {
    return `${this.#origin}/?token=${this.token}`;
  }

  /** The Set-Cookie header that trades the token. */
  cookie(): string {
    return `${this.#cookieName}=${this.#cookieValue}; HttpOnly; SameSite=Strict; Path=/`;
  }

  judge(req: IncomingMessage): Verdict {
    // DNS rebinding: a page of another name that resolves here sends its own Host.
    if (req.headers.host !== this.#host) return { ok: false, status: 403, why: "Host not served here" };
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== this.#origin)
      return { ok: false, status: 403, why: "foreign Origin" };
    const fetchSite = req.headers["sec-fetch-site"];
    if (fetchSite === "cross-site" || fetchSite === "same-site")
      return { ok: false, status: 403, why: "cross-site request" };
    const url = new URL(req.url ?? "/", this.#origin);
    const given = url.searchParams.get("token");
    if (given !== null) {
      if (req.method === "GET" && url.pathname === "/" && secretEqual(given, this.token))
        return { ok: "trade", location: "/" };
      return { ok: false, status: 401, why: "wrong token" };
    }
    const auth = req.headers.authorization;
    if (auth?.startsWith("Bearer ") && secretEqual(auth.slice(7), this.token)) return { ok: true };
    for (const part of (req.headers.cookie ?? "").split(";")) {
      const i = part.indexOf("=");
      if (i > 0 && part.slice(0, i).trim() === this.#cookieName)
        if (secretEqual(part.slice(i + 1).trim(), this.#cookieValue)) return { ok: true };
    }
    return { ok: false, status: 401, why: "no token" };
  }
}

/** A plain-text response with the protective headers. */
export function plain(
  res: ServerResponse,
  status: number,
  text: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...SAFE_HEADERS, "content-type": "text/plain; charset=utf-8", ...extra });
  res.end(text);
}
