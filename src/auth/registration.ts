import type { JsonWebKey } from "node:crypto";
import * as oauth from "oauth4webapi";
import { authError, configError } from "../errors/failures.ts";
import type { ClientConfig } from "../options/resolve-auth.ts";
import type { ClientAuthMethod, RegisteredClient, TokenStore } from "../options/token-store.ts";
import { type AuthFetchContext, authFetch } from "./auth-fetch.ts";
import { clientKey } from "./token-store.ts";

/** The client to use with one authorization server, and how it authenticates there. */
export interface ChosenClient {
  client: oauth.Client;
  method: ClientAuthMethod;
  auth: oauth.ClientAuth;
  /** Pre-registered, a client ID metadata document, or registered dynamically just now or before. */
  kind: "pre_registered" | "metadata_document" | "dynamic";
}

/** The signing key's algorithm for WebCrypto, from the JWK (alg when given, else the curve or RS256). */
function importParams(jwk: JsonWebKey): Parameters<typeof crypto.subtle.importKey>[2] {
  const crv = typeof jwk.crv === "string" ? jwk.crv : undefined;
  if (jwk.kty === "EC") return { name: "ECDSA", namedCurve: crv ?? "P-256" };
  if (jwk.kty === "OKP") return { name: crv ?? "Ed25519" };
  if (jwk.kty === "RSA") {
    const alg = typeof jwk.alg === "string" ? jwk.alg : "RS256";
    return {
      name: alg.startsWith("PS") ? "RSA-PSS" : "RSASSA-PKCS1-v1_5",
      hash: `SHA-${alg.slice(-3)}`,
    };
  }
  throw configError("invalid_option", "auth.privateKeyJwk must be an EC, RSA or OKP private key");
}

/** Imports a private JWK as a signing key for private_key_jwt (RFC 7523). */
export async function signingKey(jwk: JsonWebKey): Promise<oauth.PrivateKey> {
  const kid = (jwk as { kid?: unknown }).kid;
  try {
    const key = await crypto.subtle.importKey("jwk", jwk as oauth.JWK, importParams(jwk), false, ["sign"]);
    return typeof kid === "string" ? { key, kid } : { key };
  } catch (error) {
    if (error instanceof Error && error.name === "TetherError") throw error;
    throw configError("invalid_option", "auth.privateKeyJwk could not be imported as a signing key");
  }
}

/** One credential in the `application/x-www-form-urlencoded` form (the WHATWG serializer's). */
function formEncoded(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-encoded, joined, base64. Written
 * here rather than taken from oauth4webapi, whose encoder also escapes `-`, `_`, `.` and `~`:
 * servers that do not form-decode Basic credentials (many do not) then see the wrong id. The
 * form serializer leaves those characters alone, and servers that do decode read the same values.
 */
function secretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const pair = `${formEncoded(client.client_id)}:${formEncoded(secret)}`;
    headers.set("authorization", `Basic ${Buffer.from(pair, "utf8").toString("base64")}`);
  };
}

/** The client authentication for a method (oauth4webapi's, but for the Basic encoding above). */
export async function clientAuth(
  method: ClientAuthMethod,
  secret: string | undefined,
  jwk: JsonWebKey | undefined,
): Promise<oauth.ClientAuth> {
  if (method === "private_key_jwt" && jwk) return oauth.PrivateKeyJwt(await signingKey(jwk));
  if (method === "client_secret_basic" && secret) return secretBasic(secret);
  if (method === "client_secret_post" && secret) return oauth.ClientSecretPost(secret);
  return oauth.None();
}

/** How a client with a secret authenticates: basic unless the server supports only post (RFC 8414 default). */
export function secretMethod(as: oauth.AuthorizationServer): ClientAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported;
  if (!supported || supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

/** The method asked for in a dynamic registration: a public client where allowed (we use PKCE). */
function registrationMethod(as: oauth.AuthorizationServer): ClientAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  if (supported.includes("none")) return "none";
  if (supported.includes("client_secret_basic")) return "client_secret_basic";
  if (supported.includes("client_secret_post")) return "client_secret_post";
  return "none";
}

function asMethod(value: unknown): ClientAuthMethod | undefined {
  return value === "none" ||
    value === "client_secret_basic" ||
    value === "client_secret_post" ||
    value === "private_key_jwt"
    ? value
    : undefined;
}

/**
 * RFC 7591 §3.2.1 requires `client_secret_expires_at` alongside a secret, and many servers leave
 * it out; its absence is read as 0 (the secret does not expire) rather than refusing the client.
 */
async function withSecretExpiry(response: Response): Promise<Response> {
  if (response.status !== 201) return response;
  try {
    const doc = (await response.clone().json()) as Record<string, unknown>;
    if (typeof doc?.client_secret !== "string" || doc.client_secret_expires_at !== undefined) return response;
    return new Response(JSON.stringify({ ...doc, client_secret_expires_at: 0 }), {
      status: response.status,
      headers: response.headers,
    });
  } catch {
    return response;
  }
}

/** Registers a client dynamically (RFC 7591) and keeps the registration for this issuer. */
async function register(
  as: oauth.AuthorizationServer,
  config: ClientConfig,
  redirectUri: string,
  store: TokenStore | undefined,
  ctx: AuthFetchContext,
): Promise<RegisteredClient> {
  const requested = registrationMethod(as);
  let registered: oauth.OmitSymbolProperties<oauth.Client>;
  try {
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: config.clientName,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: requested,
        ...(config.applicationType ? { application_type: config.applicationType } : {}),
      },
      { [oauth.customFetch]: authFetch(ctx), [oauth.allowInsecureRequests]: true, signal: ctx.signal },
    );
    registered = await oauth.processDynamicClientRegistrationResponse(await withSecretExpiry(response));
  } catch (error) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (error instanceof Error && error.name === "TetherError") throw error;
    throw authError("registration_failed", "the authorization server refused to register the client", {
      redactor: ctx.redactor,
      cause: error,
    });
  }
  const secret = typeof registered.client_secret === "string" ? registered.client_secret : undefined;
  let method = asMethod(registered.token_endpoint_auth_method) ?? requested;
  if (method !== "none" && method !== "private_key_jwt" && !secret) method = "none";
  const record: RegisteredClient = {
    kind: "client",
    issuer: as.issuer,
    clientId: registered.client_id,
    authMethod: method,
    redirectUri,
  };
  if (secret) record.clientSecret = secret;
  ctx.redactor.learn(secret ? [secret] : []);
  try {
    await store?.set(clientKey(as.issuer), record);
  } catch {
    // Unsaved, the registration still serves this connection.
  }
  return record;
}

/**
 * The client for this authorization server, in the order MCP prescribes: a pre-registered client
 * if configured, else a client ID metadata document where the server supports them, else dynamic
 * registration where the server offers it (reusing a stored registration with the same redirect).
 * `redirectUri` is undefined for grants without a redirect (client credentials).
 */
export async function chooseClient(
  as: oauth.AuthorizationServer,
  config: ClientConfig,
  redirectUri: string | undefined,
  store: TokenStore | undefined,
  ctx: AuthFetchContext,
): Promise<ChosenClient> {
  if (config.clientId) {
    const method: ClientAuthMethod = config.privateKeyJwk
      ? "private_key_jwt"
      : config.clientSecret
        ? secretMethod(as)
        : "none";
    return {
      client: { client_id: config.clientId, token_endpoint_auth_method: method },
      method,
      auth: await clientAuth(method, config.clientSecret, config.privateKeyJwk),
      kind: "pre_registered",
    };
  }
  if (config.clientMetadataUrl && as.client_id_metadata_document_supported === true) {
    return {
      client: { client_id: config.clientMetadataUrl, token_endpoint_auth_method: "none" },
      method: "none",
      auth: oauth.None(),
      kind: "metadata_document",
    };
  }
  if (!as.registration_endpoint || !redirectUri) {
    throw authError(
      "no_client",
      "the authorization server offers no client registration and no client ID was configured",
      { redactor: ctx.redactor },
    );
  }
  const stored = await store?.get(clientKey(as.issuer));
  const reuse = stored?.kind === "client" && stored.redirectUri === redirectUri ? stored : undefined;
  if (reuse?.clientSecret) ctx.redactor.learn([reuse.clientSecret]);
  const record = reuse ?? (await register(as, config, redirectUri, store, ctx));
  return {
    client: { client_id: record.clientId, token_endpoint_auth_method: record.authMethod },
    method: record.authMethod,
    auth: await clientAuth(record.authMethod, record.clientSecret, undefined),
    kind: "dynamic",
  };
}

/** The port a stored registration's redirect URI uses, so a login can listen there again. */
export async function registeredPort(
  issuer: string,
  store: TokenStore | undefined,
): Promise<number | undefined> {
  try {
    const stored = await store?.get(clientKey(issuer));
    if (stored?.kind !== "client" || !stored.redirectUri) return undefined;
    const port = Number(new URL(stored.redirectUri).port);
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}
