import type { JsonWebKey } from "node:crypto";
import { configError } from "../errors/failures.ts";
import type { AuthOptions } from "./options.ts";
import type { TokenStore } from "./token-store.ts";

/** Sends the user to the authorization URL (a browser, a printed link, a test's fetch). */
export type OpenUrl = (url: string, signal: AbortSignal) => void | Promise<void>;

/** What the caller configured about the client: a pre-registered one, or a metadata document URL. */
export interface ClientConfig {
  clientId: string | undefined;
  clientSecret: string | undefined;
  privateKeyJwk: JsonWebKey | undefined;
  /** An HTTPS URL serving our client metadata document (CIMD), used where the server supports it. */
  clientMetadataUrl: string | undefined;
  /** `client_name` in a dynamic registration. */
  clientName: string;
  /** `application_type` in a dynamic registration, when the caller chose one. */
  applicationType: "native" | "web" | undefined;
}

/** Reads the JWT a `jwt_bearer` or `token_exchange` grant presents, each time one is needed. */
export type AssertionSource = (signal: AbortSignal) => Promise<string>;

/** The enterprise identity provider a `token_exchange` grant exchanges the ID token at. */
export interface IdentityProvider {
  tokenEndpoint: string;
  clientId: string | undefined;
  clientSecret: string | undefined;
}

export type Grant = "authorization_code" | "client_credentials" | "jwt_bearer" | "token_exchange";
const GRANTS: readonly Grant[] = ["authorization_code", "client_credentials", "jwt_bearer", "token_exchange"];

/** Authorization options after validation. */
export interface ResolvedAuth {
  /** `interactive`: every flow may run; `stored-only`: stored tokens (and their refresh) only. */
  mode: "interactive" | "stored-only";
  grant: Grant;
  client: ClientConfig;
  /** The JWT source of the `jwt_bearer` and `token_exchange` grants. */
  assertion: AssertionSource | undefined;
  identityProvider: IdentityProvider | undefined;
  /** Whether tokens are requested bound to a DPoP key and presented with proofs. */
  dpop: boolean;
  /** Scopes asked for in place of the server's challenge or metadata. */
  scopes: string[] | undefined;
  redirectPort: number | undefined;
  openUrl: OpenUrl | undefined;
  /**
   * Where tokens and registrations are kept: the caller's store, `process` (the store every
   * connect() in this process shares, the default), or undefined (this connection only).
   */
  store: TokenStore | "process" | undefined;
}

/** JWK members that hold private key material; each is a secret to scrub. */
const PRIVATE_JWK_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "k"] as const;

function optionalString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "")
    throw configError("invalid_option", `${name} must be a non-empty string`);
  return value;
}

function store(value: unknown): TokenStore | "process" | undefined {
  if (value === false) return undefined;
  if (value === undefined) return "process";
  const s = value as Partial<TokenStore>;
  if (
    typeof value !== "object" ||
    value === null ||
    typeof s.get !== "function" ||
    typeof s.set !== "function" ||
    typeof s.delete !== "function"
  )
    throw configError("invalid_option", "auth.tokenStore must be false or have get, set and delete methods");
  return value as TokenStore;
}

function metadataUrl(value: unknown): string | undefined {
  const text = optionalString("auth.clientMetadataUrl", value);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw configError("invalid_option", "auth.clientMetadataUrl must be a URL");
  }
  if (url.protocol !== "https:" || url.pathname === "/" || url.hash !== "")
    throw configError(
      "invalid_option",
      "auth.clientMetadataUrl must be an https URL with a path and no fragment",
    );
  return text;
}

function privateKey(value: unknown): JsonWebKey | undefined {
  if (value === undefined) return undefined;
  const jwk = value as JsonWebKey;
  if (typeof value !== "object" || value === null || typeof jwk.kty !== "string" || typeof jwk.d !== "string")
    throw configError("invalid_option", "auth.privateKeyJwk must be a private JWK (with kty and d)");
  if (!["EC", "RSA", "OKP"].includes(jwk.kty))
    throw configError("invalid_option", "auth.privateKeyJwk must be an EC, RSA or OKP key");
  return jwk;
}

function assertionSource(value: unknown, secrets: string[]): AssertionSource | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") {
    if (value.trim() === "") throw configError("invalid_option", "auth.assertion must not be empty");
    secrets.push(value);
    return async () => value;
  }
  if (typeof value !== "function")
    throw configError("invalid_option", "auth.assertion must be a string or a function returning one");
  const read = value as (signal: AbortSignal) => unknown;
  return async (signal) => {
    const jwt = await read(signal);
    if (typeof jwt !== "string" || jwt.trim() === "")
      throw configError("invalid_option", "auth.assertion returned no assertion");
    return jwt.trim();
  };
}

function identityProvider(value: unknown, secrets: string[]): IdentityProvider | undefined {
  if (value === undefined) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof value !== "object" || value === null)
    throw configError("invalid_option", "auth.identityProvider must be an object");
  const endpoint = optionalString("auth.identityProvider.tokenEndpoint", v.tokenEndpoint);
  let url: URL | undefined;
  try {
    url = endpoint === undefined ? undefined : new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
    throw configError("invalid_option", "auth.identityProvider.tokenEndpoint must be an http(s) URL");
  const clientSecret = optionalString("auth.identityProvider.clientSecret", v.clientSecret);
  const clientId = optionalString("auth.identityProvider.clientId", v.clientId);
  if (clientSecret && !clientId)
    throw configError("invalid_option", "auth.identityProvider.clientSecret needs its clientId");
  if (clientSecret) secrets.push(clientSecret);
  return { tokenEndpoint: url.href, clientId, clientSecret };
}

/**
 * Validates `auth` once, at the boundary. Returns undefined when authorization is off; the
 * secrets it holds (client secret, private key members) go to `secrets` for the redactor.
 */
export function resolveAuth(
  value: AuthOptions | undefined,
  target: { kind: "http" | "stdio"; headers?: Record<string, string>; urlCredentials?: boolean },
  clientName: string,
  secrets: string[],
): ResolvedAuth | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null)
    throw configError("invalid_option", "auth must be an object");
  const mode = value.mode ?? "interactive";
  if (!["interactive", "stored-only", "off"].includes(mode))
    throw configError("invalid_option", "auth.mode must be interactive, stored-only or off");
  if (mode === "off") return undefined;
  if (target.kind !== "http")
    throw configError(
      "invalid_option",
      "auth is for HTTP servers; a stdio server takes credentials from its environment",
    );
  // URL credentials are sent as Basic on every request; OAuth would replace them with a bearer.
  if (target.urlCredentials)
    throw configError(
      "conflicting_options",
      "URL credentials (user:password@) cannot be combined with auth (OAuth); give one of them",
    );
  if (target.headers && Object.keys(target.headers).some((h) => h.toLowerCase() === "authorization"))
    throw configError("conflicting_options", "an Authorization header cannot be combined with auth");
  const grant = value.grant ?? "authorization_code";
  if (!GRANTS.includes(grant))
    throw configError("invalid_option", `auth.grant must be one of ${GRANTS.join(", ")}`);
  const clientId = optionalString("auth.clientId", value.clientId);
  const clientSecret = optionalString("auth.clientSecret", value.clientSecret);
  const privateKeyJwk = privateKey(value.privateKeyJwk);
  if ((clientSecret || privateKeyJwk) && !clientId)
    throw configError("invalid_option", "auth.clientSecret and auth.privateKeyJwk need auth.clientId");
  if (clientSecret && privateKeyJwk)
    throw configError("conflicting_options", "auth.clientSecret and auth.privateKeyJwk cannot be combined");
  if (grant === "client_credentials" && !clientSecret && !privateKeyJwk)
    throw configError(
      "invalid_option",
      "auth.grant client_credentials needs auth.clientId with auth.clientSecret or auth.privateKeyJwk",
    );
  const assertion = assertionSource(value.assertion, secrets);
  const idp = identityProvider(value.identityProvider, secrets);
  if ((grant === "jwt_bearer" || grant === "token_exchange") && !assertion)
    throw configError("invalid_option", `auth.grant ${grant} needs auth.assertion`);
  if (assertion && grant !== "jwt_bearer" && grant !== "token_exchange")
    throw configError(
      "conflicting_options",
      "auth.assertion is for the jwt_bearer and token_exchange grants",
    );
  if (grant === "token_exchange" && (!idp || !clientId))
    throw configError(
      "invalid_option",
      "auth.grant token_exchange needs auth.identityProvider and auth.clientId",
    );
  if (idp && grant !== "token_exchange")
    throw configError("conflicting_options", "auth.identityProvider is for the token_exchange grant");
  if (value.dpop !== undefined && typeof value.dpop !== "boolean")
    throw configError("invalid_option", "auth.dpop must be true or false");
  const applicationType = value.applicationType;
  if (applicationType !== undefined && applicationType !== "native" && applicationType !== "web")
    throw configError("invalid_option", "auth.applicationType must be native or web");
  const scope = optionalString("auth.scope", value.scope);
  const port = value.redirectPort;
  if (port !== undefined && (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535))
    throw configError("invalid_limit", "auth.redirectPort must be a whole number from 1 to 65535");
  if (value.openUrl !== undefined && typeof value.openUrl !== "function")
    throw configError("invalid_option", "auth.openUrl must be a function");
  if (clientSecret) secrets.push(clientSecret);
  if (privateKeyJwk) {
    for (const m of PRIVATE_JWK_MEMBERS) {
      const v = (privateKeyJwk as Record<string, unknown>)[m];
      if (typeof v === "string") secrets.push(v);
    }
  }
  return {
    mode,
    grant,
    client: {
      clientId,
      clientSecret,
      privateKeyJwk,
      clientMetadataUrl: metadataUrl(value.clientMetadataUrl),
      clientName,
      applicationType,
    },
    assertion,
    identityProvider: idp,
    dpop: value.dpop === true,
    scopes: scope === undefined ? undefined : scope.split(/\s+/).filter((s) => s !== ""),
    redirectPort: port,
    openUrl: value.openUrl,
    store: store(value.tokenStore),
  };
}
