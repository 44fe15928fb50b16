// The authorization scenarios: discovery (protected resource and authorization server metadata,
// 2025-03-26 fallbacks), registration (pre-registered, metadata document, dynamic), scopes and
// step-up, token endpoint authentication, offline access, issuer checks, and client credentials.
// The scenarios that expect a refusal (a mismatched resource or issuer) see tether fail with an
// error, as the suite allows.
//
// Flows tether adds later plug in beside this file as auth-<flow>.mjs, exporting `scenarios`
// keyed by scenario name (enterprise-managed authorization is `auth/enterprise-managed-
// authorization` in the newest suite and `auth/cross-app-access-complete-flow` in 0.1.16; the
// others are `auth/dpop`, `auth/dpop-nonce`, `auth/wif-jwt-bearer`). They may build on
// `runAuthorized` and `ctx.authOptions`; `ctx.context` holds what the suite hands over (the
// identity provider's token endpoint, ID token and client, the workload assertion...). Until one
// names a scenario, that scenario runs here with the flows tether has.

/**
 * Connects with `auth`, lists the tools and calls each one with no arguments: the protected
 * requests the suite watches (a tool call is where a server asks for more scope).
 */
export function runAuthorized(ctx, auth) {
  return ctx.session({ auth }, async (client) => {
    for (const tool of await client.listTools()) await client.callTool(tool.name, {});
  });
}

export const scenarios = {
  "auth/*": (ctx) =>
    runAuthorized(
      ctx,
      ctx.authOptions({
        grant: ctx.scenario.startsWith("auth/client-credentials")
          ? "client_credentials"
          : "authorization_code",
      }),
    ),
};
