import type { JsonWebKey } from "node:crypto";

/** Tokens obtained for one MCP server, and what is needed to refresh them without discovery. */
export interface ServerTokens {
  kind: "tokens";
  /** The resource indicator the tokens were issued for (RFC 8707). */
  resource: string;
  /** The issuer of the authorization server that issued them; they are used with no other. */
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  /** How the client authenticates at the token endpoint. */
  authMethod: ClientAuthMethod;
  accessToken: string;
  refreshToken?: string;
  /** Wall-clock expiry of the access token, in ms since the epoch; absent when none was given. */
  expiresAt?: number;
  /** The scopes granted (or requested, when the server did not say), space-separated. */
  scope?: string;
  /** How the token is presented: `Bearer` (absent: Bearer) or `DPoP` (bound to `dpopKey`). */
  tokenType?: "Bearer" | "DPoP";
  /** The private key (JWK) DPoP proofs for these tokens are signed with. A secret. */
  dpopKey?: JsonWebKey;
}

/** A client registered dynamically with one authorization server (RFC 7591), reused while it fits. */
export interface RegisteredClient {
  kind: "client";
  issuer: string;
  clientId: string;
  clientSecret?: string;
  authMethod: ClientAuthMethod;
  /** The loopback redirect URI it was registered with. */
  redirectUri?: string;
}

export type ClientAuthMethod = "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt";

export type AuthRecord = ServerTokens | RegisteredClient;

/**
 * Where tokens and dynamic registrations are kept, by key: `serverKey(url)` for a server's tokens,
 * `clientKey(issuer)` for a registration. The library keeps them in memory for the process; the
 * CLI keeps them in a file only its user can read. Methods may be synchronous or return promises.
 */
export interface TokenStore {
  get(key: string): AuthRecord | undefined | Promise<AuthRecord | undefined>;
  set(key: string, record: AuthRecord): void | Promise<void>;
  delete(key: string): void | Promise<void>;
}
