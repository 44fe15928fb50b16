import { authError } from "../errors/failures.ts";
import type { FetchFn } from "../options/deps.ts";
import { discard } from "../transport/http-common.ts";
import type { Authorizer } from "./authorizer.ts";
import { dpopNonceChallenge } from "./challenge.ts";

function urlOf(input: Parameters<FetchFn>[0]): URL {
  return new URL(input instanceof Request ? input.url : String(input));
}

/** Retries of one request with a new DPoP nonce: a server that names a new one every time loops. */
export const MAX_NONCE_RETRIES = 2;

async function withToken(
  input: Parameters<FetchFn>[0],
  init: RequestInit | undefined,
  token: string | undefined,
  authorizer: Authorizer,
  method: string,
): Promise<RequestInit> {
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.delete("authorization");
  headers.delete("dpop");
  if (token)
    for (const [k, v] of Object.entries(await authorizer.credentials(token, method, urlOf(input))))
      headers.set(k, v);
  return { ...init, headers: Object.fromEntries(headers.entries()) };
}

/**
 * The fetch the HTTP transports use when authorization is configured: every request to the MCP
 * server's origin carries `Authorization: Bearer` (RFC 6750 §2.1), or for a DPoP-bound token
 * `Authorization: DPoP` with a fresh proof (RFC 9449 §7.1), sent once more with the server's new
 * nonce when it answers `use_dpop_nonce` (at most MAX_NONCE_RETRIES times); a 401, or a 403 with
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
    let nonces = 0;
    for (let round = 0; ; ) {
      const response = await base(input, await withToken(input, init, token, authorizer, method));
      // A DPoP-bound token's proof lacked the nonce the server now names: the same token again.
      if (authorizer.nonceChallenged(response) && nonces < MAX_NONCE_RETRIES) {
        nonces++;
        discard(response);
        continue;
      }
      if (response.status === 401 && token && dpopNonceChallenge(response.headers.get("www-authenticate"))) {
        discard(response);
        throw authError("token_rejected", "the server kept asking for a new DPoP nonce; gave up", {
          httpStatus: 401,
        });
      }
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
      round++;
    }
  }) as FetchFn;
}
