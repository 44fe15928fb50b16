import * as oauth from "oauth4webapi";
import { type AuthReason, authError } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import { linkSignals } from "../lifecycle/abort.ts";
import type { OpenUrl } from "../options/resolve-auth.ts";
import { type AuthFetchContext, assertSecureEndpoint, authFetch } from "./auth-fetch.ts";
import type { DpopKey } from "./dpop.ts";
import type { LoopbackRedirect } from "./loopback.ts";
import type { ChosenClient } from "./registration.ts";

/** What a token endpoint granted, as kept and used. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Wall-clock expiry in ms since the epoch, when the server gave a lifetime. */
  expiresAt?: number;
  /** Granted scopes, space-separated (the requested ones when the server did not say). */
  scope?: string;
  /** `DPoP` when the server bound the token to our DPoP key; else Bearer. */
  tokenType?: "Bearer" | "DPoP";
}

/** Nonces one token request may be asked for before it is refused: a server that never settles loops. */
export const MAX_DPOP_NONCE_RETRIES = 1;

export function options(ctx: AuthFetchContext, dpop?: DpopKey) {
  return {
    [oauth.customFetch]: authFetch(ctx),
    // Plain HTTP is refused by authFetch itself except on loopback; this only lets those through.
    [oauth.allowInsecureRequests]: true,
    signal: ctx.signal,
    ...(dpop ? { DPoP: dpop.handle } : {}),
  };
}

/**
 * Runs a token request (and the processing of its response) again when the authorization server
 * answers `use_dpop_nonce` (RFC 9449 §8): oauth4webapi's handle has kept the nonce it sent, so the
 * next proof carries it. At most MAX_DPOP_NONCE_RETRIES times; then the refusal stands.
 */
async function withNonceRetry<T>(dpop: DpopKey | undefined, run: () => Promise<T>): Promise<T> {
  for (let round = 0; ; round++) {
    try {
      return await run();
    } catch (error) {
      if (!dpop || round >= MAX_DPOP_NONCE_RETRIES || !oauth.isDPoPNonceError(error)) throw error;
    }
  }
}

/** An OAuth error code for a message: registry words only, never free server text. */
function errorWord(value: unknown): string {
  return typeof value === "string" && /^[a-z_]{1,40}$/.test(value) ? value : "error";
}

/** The failure for whatever a token request threw, by the OAuth error code it carried. */
export function tokenFailure(error: unknown, ctx: AuthFetchContext, what: string): unknown {
  if (ctx.signal.aborted) return ctx.signal.reason;
  if (error instanceof TetherError) return error;
  let reason: AuthReason = "token_error";
  let word = "error";
  if (error instanceof oauth.ResponseBodyError) {
    word = errorWord(error.error);
    reason =
      error.error === "invalid_grant"
        ? "invalid_grant"
        : error.error === "invalid_client" || error.error === "unauthorized_client"
          ? "invalid_client"
          : error.error === "access_denied"
            ? "denied"
            : "token_error";
  } else if (error instanceof oauth.WWWAuthenticateChallengeError) {
    reason = "invalid_client";
    word = "invalid_client";
  }
  return authError(reason, `the authorization server refused the ${what} (${word})`, {
    redactor: ctx.redactor,
    cause: error,
  });
}

/** How one grant asks the token endpoint (given the request options) and reads its answer. */
export interface GrantExchange {
  request(opts: ReturnType<typeof options>): Promise<Response>;
  process(response: Response): Promise<oauth.TokenEndpointResponse>;
}

/**
 * One token request under the grant's DPoP key, if any: sent with the context's request options,
 * sent again on `use_dpop_nonce` (withNonceRetry), its processed answer made a TokenSet; whatever
 * it throws becomes the failure of the `what` (tokenFailure).
 */
export async function tokenGrant(
  what: string,
  ctx: AuthFetchContext,
  dpop: DpopKey | undefined,
  requested: string[] | undefined,
  exchange: GrantExchange,
): Promise<TokenSet> {
  try {
    return await withNonceRetry(dpop, async () => {
      const response = await exchange.request(options(ctx, dpop));
      return tokenSet(await exchange.process(response), requested);
    });
  } catch (error) {
    throw tokenFailure(error, ctx, what);
  }
}

/** The `scope` parameter of a token request, when scopes were asked for. */
export function scopeParameter(scopes: string[] | undefined): { scope?: string } {
  return scopes?.length ? { scope: scopes.join(" ") } : {};
}

function tokenSet(response: oauth.TokenEndpointResponse, requested: string[] | undefined): TokenSet {
  const out: TokenSet = { accessToken: response.access_token };
  if (response.token_type === "dpop") out.tokenType = "DPoP";
  if (response.refresh_token) out.refreshToken = response.refresh_token;
  if (typeof response.expires_in === "number") out.expiresAt = Date.now() + response.expires_in * 1000;
  const scope = response.scope ?? requested?.join(" ");
  if (scope) out.scope = scope;
  return out;
}

export interface AuthorizationCodeRequest {
  as: oauth.AuthorizationServer;
  client: ChosenClient;
  redirect: LoopbackRedirect;
  resource: string;
  scopes: string[] | undefined;
  openUrl: OpenUrl;
  dpop?: DpopKey;
}

/**
 * The authorization code grant with PKCE (S256): the user is sent to the authorization URL, the
 * redirect comes back to the loopback receiver, the state (and issuer, RFC 9207) are checked, and
 * the code is exchanged with the verifier and the resource indicator. Waits no longer than the
 * context's signal; a hook that fails to send the user ends the wait at once.
 */
export async function authorizationCode(
  req: AuthorizationCodeRequest,
  ctx: AuthFetchContext,
): Promise<TokenSet> {
  const { as, client } = req;
  if (!as.code_challenge_methods_supported?.includes("S256"))
    throw authError("pkce_unsupported", "the authorization server does not declare PKCE (S256); refused", {
      redactor: ctx.redactor,
    });
  if (typeof as.authorization_endpoint !== "string")
    throw authError("bad_metadata", "the authorization server has no authorization endpoint", {
      redactor: ctx.redactor,
    });
  const endpoint = new URL(as.authorization_endpoint);
  assertSecureEndpoint(endpoint, ctx.redactor);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  ctx.redactor.learn([verifier]);
  const url = new URL(endpoint.href);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", client.client.client_id);
  url.searchParams.set("redirect_uri", req.redirect.redirectUri);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", req.resource);
  if (req.scopes?.length) url.searchParams.set("scope", req.scopes.join(" "));

  // The hook sends the user; if it fails, waiting for a redirect that cannot come is pointless.
  const hook = new AbortController();
  const wait = linkSignals(ctx.signal, hook.signal);
  let params: URLSearchParams;
  try {
    Promise.resolve()
      .then(() => req.openUrl(url.href, ctx.signal))
      .catch((error: unknown) => {
        if (ctx.signal.aborted) return;
        hook.abort(
          authError("login_required", "the user could not be sent to the authorization page", {
            redactor: ctx.redactor,
            cause: error,
          }),
        );
      });
    params = await req.redirect.callback(wait.signal);
  } finally {
    wait.dispose();
    await req.redirect.close();
  }
  if (params.get("state") !== state)
    throw authError("state_mismatch", "the authorization redirect carried the wrong state; refused", {
      redactor: ctx.redactor,
    });
  const code = params.get("code");
  if (code) ctx.redactor.learn([code]);
  let validated: URLSearchParams;
  try {
    validated = oauth.validateAuthResponse(as, client.client, params, state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      throw authError("denied", `the authorization was not granted (${errorWord(error.error)})`, {
        redactor: ctx.redactor,
      });
    }
    throw authError("issuer_mismatch", "the authorization redirect came from another issuer; refused", {
      redactor: ctx.redactor,
      cause: error,
    });
  }
  return tokenGrant("authorization code", ctx, req.dpop, req.scopes, {
    request: (opts) =>
      oauth.authorizationCodeGrantRequest(
        as,
        client.client,
        client.auth,
        validated,
        req.redirect.redirectUri,
        verifier,
        { ...opts, additionalParameters: { resource: req.resource } },
      ),
    process: (response) => oauth.processAuthorizationCodeResponse(as, client.client, response),
  });
}

/** The client credentials grant (RFC 6749 §4.4), for clients acting on their own behalf. */
export async function clientCredentials(
  as: oauth.AuthorizationServer,
  client: ChosenClient,
  resource: string,
  scopes: string[] | undefined,
  ctx: AuthFetchContext,
  dpop?: DpopKey,
): Promise<TokenSet> {
  const parameters = { resource, ...scopeParameter(scopes) };
  return tokenGrant("client credentials", ctx, dpop, scopes, {
    request: (opts) => oauth.clientCredentialsGrantRequest(as, client.client, client.auth, parameters, opts),
    process: (response) => oauth.processClientCredentialsResponse(as, client.client, response),
  });
}

/**
 * The refresh token grant: a new access token, and the refresh token rotated when the server
 * issues a new one (OAuth 2.1 §4.3.1); the old one is kept only when it does not.
 */
export async function refresh(
  as: oauth.AuthorizationServer,
  client: ChosenClient,
  current: TokenSet & { refreshToken: string },
  resource: string,
  ctx: AuthFetchContext,
  dpop?: DpopKey,
): Promise<TokenSet> {
  const next = await tokenGrant("refresh token", ctx, dpop, undefined, {
    request: (opts) =>
      oauth.refreshTokenGrantRequest(as, client.client, client.auth, current.refreshToken, {
        ...opts,
        additionalParameters: { resource },
      }),
    process: (response) => oauth.processRefreshTokenResponse(as, client.client, response),
  });
  return {
    ...next,
    refreshToken: next.refreshToken ?? current.refreshToken,
    scope: next.scope ?? current.scope,
  };
}
