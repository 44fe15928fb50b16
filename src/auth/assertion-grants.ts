import * as oauth from "oauth4webapi";
import { authError } from "../errors/failures.ts";
import type { IdentityProvider } from "../options/resolve-auth.ts";
import { type AuthFetchContext, assertSecureEndpoint } from "./auth-fetch.ts";
import type { DpopKey } from "./dpop.ts";
import { options, scopeParameter, type TokenSet, tokenFailure, tokenGrant } from "./flows.ts";
import { type ChosenClient, clientAuth } from "./registration.ts";

/** RFC 7523 §2.1: the JWT-bearer authorization grant. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** RFC 8693 §2.1: the token exchange grant. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
/** The identity assertion JWT authorization grant (ID-JAG) of enterprise-managed authorization. */
const ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

/** An ID-JAG comes back with token_type `N_A` (RFC 8693 §2.2.1): not a token to present, so accepted. */
const NOT_APPLICABLE = { recognizedTokenTypes: { n_a: () => {} } };

/**
 * The JWT-bearer grant (RFC 7523 §2.1): the assertion (a workload identity token, or an ID-JAG)
 * is presented at the MCP authorization server with the resource indicator. Refusals are
 * surfaced as they are (invalid_grant, invalid_scope, unauthorized_client): never retried and
 * never answered with another grant.
 */
export async function jwtBearer(
  as: oauth.AuthorizationServer,
  client: ChosenClient,
  assertion: string,
  resource: string,
  scopes: string[] | undefined,
  ctx: AuthFetchContext,
  dpop?: DpopKey,
): Promise<TokenSet> {
  ctx.redactor.learn([assertion]);
  const parameters = { assertion, resource, ...scopeParameter(scopes) };
  return tokenGrant("JWT-bearer grant", ctx, dpop, scopes, {
    request: (opts) =>
      oauth.genericTokenEndpointRequest(as, client.client, client.auth, JWT_BEARER_GRANT, parameters, opts),
    process: (response) => oauth.processGenericTokenEndpointResponse(as, client.client, response),
  });
}

/** The client at the identity provider: its own ID and secret, or a public client. */
async function idpClient(idp: IdentityProvider): Promise<ChosenClient> {
  const method = idp.clientSecret ? "client_secret_basic" : "none";
  return {
    // Without a client ID of its own the exchange names none (the identity provider knows the token).
    client: { client_id: idp.clientId ?? "unnamed", token_endpoint_auth_method: method },
    method,
    auth: idp.clientId ? await clientAuth(method, idp.clientSecret, undefined) : () => {},
    kind: "pre_registered",
  };
}

/**
 * Enterprise-managed authorization, first step: the user's ID token from the enterprise identity
 * provider is exchanged there (RFC 8693) for an identity assertion grant (ID-JAG) whose audience
 * is the MCP authorization server and whose resource is the MCP server. Returns the ID-JAG, which
 * the JWT-bearer grant then presents.
 */
export async function exchangeForIdJag(
  idp: IdentityProvider,
  idToken: string,
  audience: string,
  resource: string,
  scopes: string[] | undefined,
  ctx: AuthFetchContext,
): Promise<string> {
  ctx.redactor.learn([idToken]);
  const endpoint = new URL(idp.tokenEndpoint);
  assertSecureEndpoint(endpoint, ctx.redactor);
  const as: oauth.AuthorizationServer = { issuer: endpoint.origin, token_endpoint: endpoint.href };
  const client = await idpClient(idp);
  const parameters = {
    requested_token_type: ID_JAG_TYPE,
    subject_token: idToken,
    subject_token_type: ID_TOKEN_TYPE,
    audience,
    resource,
    ...scopeParameter(scopes),
  };
  let granted: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.genericTokenEndpointRequest(
      as,
      client.client,
      client.auth,
      TOKEN_EXCHANGE_GRANT,
      parameters,
      options(ctx),
    );
    granted = await oauth.processGenericTokenEndpointResponse(as, client.client, response, NOT_APPLICABLE);
  } catch (error) {
    throw tokenFailure(error, ctx, "token exchange");
  }
  ctx.redactor.learn([granted.access_token]);
  if (granted.issued_token_type !== ID_JAG_TYPE)
    throw authError(
      "token_error",
      "the identity provider issued something other than an identity assertion grant",
      {
        redactor: ctx.redactor,
      },
    );
  return granted.access_token;
}
