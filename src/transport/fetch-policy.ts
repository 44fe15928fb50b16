/**
 * The one redirect policy for every request of ours: MCP POSTs and GET streams on both HTTP
 * transports, the closing DELETE, and every OAuth request (metadata, registration, tokens).
 *
 * The platform's fetch is always asked for `redirect: "manual"` (a caller's own fetch too), so a
 * 3xx comes back to us instead of being followed with our headers, credentials and body. Then:
 *
 * - A same-origin redirect (scheme, host and port equal) is followed by us, at most
 *   `MAX_REDIRECTS` times per request, with the same headers and signal. 307 and 308 keep the
 *   method and body. 301, 302 and 303 are followed for GET and HEAD only: for anything else fetch
 *   semantics would resend it as a GET without its body, which for a JSON-RPC POST is a different
 *   request, so those are refused.
 * - A redirect to another origin, to a scheme other than http and https, with a missing or
 *   unparseable Location, or with credentials in it, is refused: nothing is sent to the target.
 * - A relative Location is resolved against the URL that answered it.
 *
 * The body of every redirect response is cancelled unread. The response finally returned is read
 * by the caller under its own byte ceiling, on the same signal (so the deadline spans every hop).
 */
import { redirectError, type Where } from "../errors/failures.ts";
import { raceAbort } from "../lifecycle/abort.ts";

type FetchFn = typeof fetch;

/** Same-origin redirects followed for one request before it is refused (`too_many_redirects`). */
export const MAX_REDIRECTS = 3;

/** The statuses fetch treats as redirects; any other 3xx is an ordinary response. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Bodies that can be sent again as they are when a 307 or 308 is followed. */
function replayable(body: RequestInit["body"]): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === "string" ||
    body instanceof URLSearchParams ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob
  );
}

function sameOrigin(href: string, url: URL): boolean {
  try {
    return new URL(href).origin === url.origin;
  } catch {
    return false;
  }
}

function cancelBody(response: Response): void {
  response.body?.cancel().catch(() => {});
}

/** Where a redirect may go, or why it may not. */
function nextHop(
  response: Response,
  current: URL,
  method: string,
  body: RequestInit["body"],
): { ok: true; url: URL } | { ok: false; message: string } {
  const location = response.headers.get("location");
  if (location === null || location.trim() === "")
    return { ok: false, message: "the server redirected without a Location; refused" };
  let url: URL;
  try {
    url = new URL(location, current);
  } catch {
    return { ok: false, message: "the server redirected to an invalid address; refused" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { ok: false, message: "the server redirected to a non-HTTP(S) address; refused" };
  if (url.origin !== current.origin)
    return { ok: false, message: "the server redirected to another origin; refused" };
  if (url.username !== "" || url.password !== "")
    return { ok: false, message: "the server redirected to an address with credentials; refused" };
  const keepsMethod = response.status === 307 || response.status === 308;
  if (!keepsMethod && method !== "GET" && method !== "HEAD")
    return {
      ok: false,
      message: `the server answered a ${method} with HTTP ${response.status}, which would drop its body; refused`,
    };
  if (!replayable(body))
    return { ok: false, message: "the server redirected a request whose body cannot be sent again; refused" };
  return { ok: true, url };
}

/**
 * Sends one request under the redirect policy and returns the first response that is not a
 * redirect. Throws a `connection` TetherError (`redirect_refused`, `too_many_redirects`) for a
 * redirect it will not follow, and whatever fetch throws otherwise (the caller classifies it).
 * Every hop is raced against `signal`: a caller's fetch that ignores it cannot hold us.
 */
export async function fetchWithPolicy(
  fetchFn: FetchFn,
  url: URL,
  init: RequestInit,
  signal: AbortSignal,
  where: Where,
): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  let current = url;
  for (let hops = 0; ; hops++) {
    const response = await raceAbort(fetchFn(current, { ...init, redirect: "manual", signal }), signal);
    if (!REDIRECT_STATUSES.has(response.status)) {
      // A fetch that followed a redirect despite "manual" (a caller's own) already sent the request;
      // its answer from another origin is still not taken as the server's.
      if (response.redirected && response.url !== "" && !sameOrigin(response.url, url)) {
        cancelBody(response);
        throw redirectError(
          where,
          "redirect_refused",
          "the fetch followed a redirect to another origin; refused",
          response.status,
        );
      }
      return response;
    }
    cancelBody(response);
    const next = nextHop(response, current, method, init.body);
    if (!next.ok) throw redirectError(where, "redirect_refused", next.message, response.status);
    if (hops >= MAX_REDIRECTS) {
      throw redirectError(
        where,
        "too_many_redirects",
        `the server redirected more than ${MAX_REDIRECTS} times; refused`,
        response.status,
      );
    }
    current = next.url;
  }
}
