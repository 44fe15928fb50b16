// The authorization extensions: enterprise-managed authorization (the ID token exchanged at the
// enterprise identity provider for an ID-JAG, then the JWT-bearer grant at the MCP server's
// authorization server), DPoP-bound tokens (with and without server nonces), and workload
// identity (the JWT-bearer grant with a workload's assertion). Each is an AuthOptions setting of
// tether's public API; the requests the suite watches are the same as in auth.mjs.
//
// The application_type scenarios need nothing here: tether names `native` in a dynamic
// registration whenever the spec version in play requires it (see auth.mjs's general handler).
import { runAuthorized } from "./auth.mjs";

/** Token exchange at the identity provider the scenario runs, then the JWT-bearer grant. */
function enterpriseManaged(ctx) {
  const c = ctx.context;
  return runAuthorized(
    ctx,
    ctx.authOptions({
      grant: "token_exchange",
      clientMetadataUrl: undefined,
      assertion: c.idp_id_token,
      identityProvider: { tokenEndpoint: c.idp_token_endpoint, clientId: c.idp_client_id },
    }),
  );
}

/** The authorization code flow with DPoP: proofs at the token endpoint and on every request. */
function dpop(ctx) {
  return runAuthorized(ctx, ctx.authOptions({ dpop: true }));
}

/** The JWT-bearer grant with the scenario's valid workload assertion. */
function workloadIdentity(ctx) {
  return runAuthorized(
    ctx,
    ctx.authOptions({ grant: "jwt_bearer", clientMetadataUrl: undefined, assertion: ctx.context.valid_jwt }),
  );
}

export const scenarios = {
  "auth/cross-app-access-complete-flow": enterpriseManaged,
  "auth/enterprise-managed-authorization": enterpriseManaged,
  "auth/dpop": dpop,
  "auth/dpop-nonce": dpop,
  "auth/wif-jwt-bearer": workloadIdentity,
};
