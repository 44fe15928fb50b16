import type { FetchFn } from "../options/deps.ts";
import { discard } from "../transport/http-common.ts";
import type { Authorizer } from "./authorizer.ts";

function urlOf(input: Parameters<FetchFn>[0]): URL {
  return new URL(input instanceof Request ? input.url : String(input));
}

function withBearer(
  input: Parameters<FetchFn>[0],
  init: RequestInit | undefined,
  token: string | undefined,
): RequestInit {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (token) headers.set("authorization", `Bearer ${token}`);
  else headers.delete("authorization");
  return { ...init, headers: Object.fromEntries(headers.entries()) };
}

/**
 * The fetch the HTTP transports use when authorization is configured: every request to the MCP
 * server's origin carries `Authorization: Bearer` (RFC 6750 §2.1); a 401, or a 403 with
 * `insufficient_scope`, hands the challenge to the authorizer and the same request is sent again
 * with the token it returns, at most `MAX_AUTHORIZATIONS_PER_REQUEST` times. Everything runs
 * under the request's own signal (the stage or call deadline). A request without a deadline of
 * its own (the background GET stream, the closing DELETE) never starts a sign-in once a token is
 * held; a response the authorizer lets stand is returned as it came, so the transport classifies
 * it as before.
 */
export function authorizedFetch(base: FetchFn, authorizer: Authorizer): FetchFn {
  return (async (input: Parameters<FetchFn>[0], init?: RequestInit): Promise<Response> => {
    if (!authorizer.covers(urlOf(input))) return await base(input, init);
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const method = (init?.method ?? "GET").toUpperCase();
    // POSTs carry a message and its deadline; a GET only opens the first stream (HTTP+SSE).
    const flows = method === "POST" || (method === "GET" && !authorizer.holdsToken);
    let token = await authorizer.tokenFor(signal, method === "POST");
    for (let round = 0; ; round++) {
      const response = await base(input, withBearer(input, init, token));
      if (response.status !== 401 && response.status !== 403) return response;
      let next: string | undefined;
      try {
        next = await authorizer.challenged(
          response.status,
          response.headers.get("www-authenticate"),
          token,
          signal,
          { flows, round },
        );
      } catch (error) {
        discard(response);
        throw error;
      }
      if (next === undefined) return response;
      discard(response);
      token = next;
    }
  }) as FetchFn;
}
