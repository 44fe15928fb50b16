// A local OAuth 2.1 authorization server and an MCP server it protects, both on 127.0.0.1 port 0,
// for the authorization tests. The authorization server serves RFC 8414 metadata, /authorize
// (approves at once, or denies, by redirecting to the redirect_uri), /token (authorization code
// with PKCE S256 verified, refresh with rotation, client credentials with client_secret_basic or
// private_key_jwt verified with node:crypto) and /register (RFC 7591). The MCP server is the
// legacy Streamable HTTP one from hostile.ts behind a bearer check that answers 401 with
// `resource_metadata` and `scope`, and 403 `insufficient_scope` for tools that need more.
//
// It also speaks the JWT-bearer grant (RFC 7523: a workload assertion signed by a trusted key, or
// an identity assertion grant from the identity provider below) and DPoP (RFC 9449: proofs
// verified on token requests, tokens bound to the proof key, nonces on demand, at the token
// endpoint and at the MCP server). startIdentityProvider is an enterprise identity provider's
// token endpoint doing token exchange (RFC 8693): an ID token it issued becomes an ID-JAG.
//
// Every value the servers issue or receive carries "CANARY" so tests can look for it anywhere.

import assert from "node:assert/strict";
import type { JsonWebKey, KeyObject } from "node:crypto";
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";
import type { ServerResponse } from "node:http";
import { after, before } from "node:test";
import {
  type Client,
  type ConnectSettings,
  connect,
  type HttpTarget,
  type MemoryTokenStore,
  type ServerTokens,
  serverKey,
} from "../../src/index.ts";
import {
  type Handler,
  type HostileServer,
  legacyStreamableHandler,
  type Recorded,
  startHttp,
} from "./hostile.ts";

export interface AuthServerOptions {
  /** Lifetime of access tokens, in seconds (default 3600). */
  expiresIn?: number;
  /** Issue refresh tokens (default true). */
  refreshTokens?: boolean;
  /** `/authorize` redirects with error=access_denied. */
  deny?: boolean;
  /** `/authorize` redirects with a state other than the one it was given. */
  wrongState?: boolean;
  /** Metadata requests never get an answer. */
  hangMetadata?: boolean;
  /** Metadata padded past this many bytes. */
  metadataBytes?: number;
  /** Metadata sent without a Content-Length. */
  metadataChunked?: boolean;
  /** Advertise dynamic registration (default true). */
  registration?: boolean;
  /** A pre-registered client: its secret, or the public JWK of its private_key_jwt key. */
  client?: { id: string; secret?: string; publicJwk?: JsonWebKey };
  /** token_endpoint_auth_methods_supported (default ["none", "client_secret_basic", "private_key_jwt"]). */
  authMethods?: string[];
  /** scopes_supported in the metadata. */
  scopesSupported?: string[];
  /** Grant no scope at all, whatever is asked (and say so in the token response). */
  grantNoScopes?: boolean;
  /** Refuse every authorization code (invalid_grant), echoing the code and verifier back. */
  rejectCodes?: boolean;
  /** Accept the JWT-bearer grant with assertions signed by this ES256 key (a workload's issuer). */
  workloadKey?: JsonWebKey;
  /** Accept the JWT-bearer grant with ID-JAGs from this identity provider. */
  identityProvider?: IdentityProvider;
  /** Advertise and verify DPoP; `nonce`: demand a nonce first; `nonceLoop`: a new one every time. */
  dpop?: { nonce?: boolean; nonceLoop?: boolean };
  /** The token endpoint answers with a redirect to this URL. */
  tokenRedirect?: string;
  /** Token responses padded past this many bytes. */
  tokenBytes?: number;
}

export interface IssuedToken {
  scopes: string[];
  expiresAt: number;
  resource: string | undefined;
  /** The thumbprint of the DPoP key the token is bound to. */
  jkt?: string;
}

export interface AuthServer {
  server: HostileServer;
  origin: string;
  /** Access tokens issued and still valid. */
  tokens: Map<string, IssuedToken>;
  /** Every secret value issued or received (codes, tokens, verifiers, assertions, secrets). */
  secrets: Set<string>;
  /** Requests per path, e.g. `/token`. */
  count(path: string): number;
  /** Form bodies of token requests, in order. */
  tokenRequests: URLSearchParams[];
  authorizeRequests: URLSearchParams[];
  /** DPoP proofs seen at the token endpoint (headers), in order, and the reasons any failed. */
  dpopProofs: string[];
  dpopErrors: string[];
  /** application_type of each registration request, in order. */
  applicationTypes: (string | undefined)[];
  close(): Promise<void>;
}

/** A fresh ES256 key pair as JWKs, for assertions and ID tokens. */
export function es256(): { privateJwk: JsonWebKey; publicJwk: JsonWebKey; privateKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    privateKey,
    privateJwk: privateKey.export({ format: "jwk" }),
    publicJwk: publicKey.export({ format: "jwk" }),
  };
}

/** Signs an ES256 JWT with node:crypto. */
export function signJwt(
  claims: Record<string, unknown>,
  key: KeyObject,
  header: Record<string, unknown> = {},
): string {
  const h = Buffer.from(JSON.stringify({ alg: "ES256", typ: "JWT", ...header })).toString("base64url");
  const p = Buffer.from(JSON.stringify(claims)).toString("base64url");
  const s = sign("sha256", Buffer.from(`${h}.${p}`), { key, dsaEncoding: "ieee-p1363" });
  return `${h}.${p}.${s.toString("base64url")}`;
}

function decodePart(part: string | undefined): Record<string, unknown> {
  try {
    return JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** RFC 7638 thumbprint of an EC public JWK. */
export function thumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical).digest("base64url");
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3) for a request: typ, ES256, public jwk only, signature,
 * htm, htu (no query), a fresh iat, a jti not seen before, ath for the token when one is
 * presented, and the nonce when one is required. Returns the key's thumbprint or a reason.
 */
export function checkProof(
  proof: string | string[] | undefined,
  expect: { method: string; url: string; token?: string; nonce?: string; jtis: Set<string> },
): { ok: true; jkt: string; nonce: unknown } | { ok: false; why: string } {
  if (typeof proof !== "string") return { ok: false, why: "no single DPoP header" };
  const parts = proof.split(".");
  if (parts.length !== 3) return { ok: false, why: "not a JWS" };
  const header = decodePart(parts[0]);
  const claims = decodePart(parts[1]);
  const jwk = header.jwk as JsonWebKey | undefined;
  if (header.typ !== "dpop+jwt" || header.alg !== "ES256" || !jwk || jwk.d !== undefined)
    return { ok: false, why: "header" };
  const checked = verifyAssertion(proof, jwk);
  if (!checked.ok) return { ok: false, why: checked.why };
  const url = new URL(expect.url);
  if (claims.htm !== expect.method) return { ok: false, why: "htm" };
  if (claims.htu !== `${url.origin}${url.pathname}`) return { ok: false, why: "htu" };
  if (typeof claims.iat !== "number" || Math.abs(Date.now() / 1000 - claims.iat) > 300)
    return { ok: false, why: "iat" };
  if (typeof claims.jti !== "string" || expect.jtis.has(claims.jti)) return { ok: false, why: "jti" };
  expect.jtis.add(claims.jti);
  if (expect.token !== undefined) {
    const ath = createHash("sha256").update(expect.token).digest("base64url");
    if (claims.ath !== ath) return { ok: false, why: "ath" };
  }
  if (expect.nonce !== undefined && claims.nonce !== expect.nonce) return { ok: false, why: "nonce" };
  return { ok: true, jkt: thumbprint(jwk), nonce: claims.nonce };
}

const canary = (kind: string) => `${kind}-CANARY-${randomBytes(12).toString("hex")}`;

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";

export interface IdentityProvider {
  server: HostileServer;
  origin: string;
  tokenEndpoint: string;
  /** Verifies the ID-JAGs it issues. */
  publicJwk: JsonWebKey;
  /** A fresh ID token for a user (a JWT it signed), and a secret to look for. */
  idToken(user?: string): string;
  /** Token exchange requests, in order. */
  exchanges: URLSearchParams[];
  secrets: Set<string>;
  close(): Promise<void>;
}

/**
 * An enterprise identity provider's token endpoint: token exchange (RFC 8693) of an ID token it
 * issued (subject_token_type id_token) for an ID-JAG (requested_token_type id-jag) whose
 * audience and resource are the ones asked for, for the client the exchange names.
 */
export async function startIdentityProvider(options: { asClientId: string }): Promise<IdentityProvider> {
  const key = es256();
  const issued = new Set<string>();
  const secrets = new Set<string>();
  const exchanges: URLSearchParams[] = [];
  let origin = "";
  const server = await startHttp(
    (res, rec) => {
      if (rec.path !== "/token" || rec.method !== "POST") return send(res, 404, { error: "not_found" });
      const form = new URLSearchParams(rec.rawBody);
      exchanges.push(form);
      const subject = form.get("subject_token") ?? "";
      if (form.get("grant_type") !== TOKEN_EXCHANGE)
        return send(res, 400, { error: "unsupported_grant_type" });
      if (
        form.get("subject_token_type") !== ID_TOKEN ||
        form.get("requested_token_type") !== ID_JAG ||
        !form.get("audience") ||
        !form.get("resource")
      )
        return send(res, 400, { error: "invalid_request" });
      // Echoes the subject token it refuses: the client must never show it.
      if (!issued.has(subject))
        return send(res, 400, { error: "invalid_grant", error_description: `unknown ${subject}` });
      const now = Math.floor(Date.now() / 1000);
      const jag = signJwt(
        {
          iss: origin,
          sub: "user-1",
          aud: form.get("audience"),
          resource: form.get("resource"),
          client_id: options.asClientId,
          iat: now,
          exp: now + 300,
          jti: canary("jag"),
        },
        key.privateKey,
        { typ: "oauth-id-jag+jwt" },
      );
      secrets.add(jag);
      return send(res, 200, {
        access_token: jag,
        issued_token_type: ID_JAG,
        token_type: "N_A",
        expires_in: 300,
      });
    },
    { path: "" },
  );
  origin = server.origin;
  return {
    server,
    origin,
    tokenEndpoint: `${origin}/token`,
    publicJwk: key.publicJwk,
    idToken(user = "user-1") {
      const now = Math.floor(Date.now() / 1000);
      const jwt = signJwt(
        { iss: origin, sub: user, aud: "idp-client", iat: now, exp: now + 3600, nonce: canary("idt") },
        key.privateKey,
      );
      issued.add(jwt);
      secrets.add(jwt);
      return jwt;
    },
    exchanges,
    secrets,
    close: () => server.close(),
  };
}

function b64url(buf: Buffer): string {
  return buf.toString("base64url");
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    })
    .end(text);
}

/** A JSON body in two chunks with no Content-Length: its size is known only as it is read. */
function sendChunked(res: ServerResponse, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(200, { "content-type": "application/json" });
  res.write(text.slice(0, text.length >> 1));
  res.end(text.slice(text.length >> 1));
}

/** Verifies an ES256 client assertion (RFC 7523) with node:crypto; returns its claims or a reason. */
function verifyAssertion(
  jwt: string,
  publicJwk: JsonWebKey,
): { ok: true; claims: Record<string, unknown> } | { ok: false; why: string } {
  const parts = jwt.split(".");
  if (parts.length !== 3) return { ok: false, why: "not a JWS" };
  const [h, p, s] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8")) as { alg?: string };
  if (header.alg !== "ES256") return { ok: false, why: `alg ${header.alg}` };
  const good = verify(
    "sha256",
    Buffer.from(`${h}.${p}`),
    { key: createPublicKey({ key: publicJwk, format: "jwk" }), dsaEncoding: "ieee-p1363" },
    Buffer.from(s, "base64url"),
  );
  if (!good) return { ok: false, why: "bad signature" };
  return {
    ok: true,
    claims: JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as Record<string, unknown>,
  };
}

export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const tokens = new Map<string, IssuedToken>();
  const refreshTokens = new Map<
    string,
    { scopes: string[]; clientId: string; resource: string | undefined }
  >();
  const codes = new Map<
    string,
    {
      challenge: string;
      redirectUri: string;
      clientId: string;
      scopes: string[];
      resource: string | undefined;
    }
  >();
  const clients = new Map<string, { secret?: string; publicJwk?: JsonWebKey }>();
  if (options.client) clients.set(options.client.id, options.client);
  const secrets = new Set<string>();
  const tokenRequests: URLSearchParams[] = [];
  const authorizeRequests: URLSearchParams[] = [];
  const dpopProofs: string[] = [];
  const dpopErrors: string[] = [];
  const applicationTypes: (string | undefined)[] = [];
  const jtis = new Set<string>();
  let nonceCount = 0;
  let asNonce = "as-nonce-0";
  let origin = "";

  const issue = (
    asked: string[],
    clientId: string,
    resource: string | undefined,
    withRefresh: boolean,
    jkt?: string,
  ) => {
    const scopes = options.grantNoScopes ? [] : asked;
    const access = canary("at");
    const expiresIn = options.expiresIn ?? 3600;
    tokens.set(access, {
      scopes,
      expiresAt: Date.now() + expiresIn * 1000,
      resource,
      ...(jkt ? { jkt } : {}),
    });
    secrets.add(access);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: jkt ? "DPoP" : "Bearer",
      expires_in: expiresIn,
      scope: scopes.join(" "),
    };
    if (options.tokenBytes) body.padding = "x".repeat(options.tokenBytes);
    if (withRefresh && options.refreshTokens !== false) {
      const rt = canary("rt");
      refreshTokens.set(rt, { scopes, clientId, resource });
      secrets.add(rt);
      body.refresh_token = rt;
    }
    return body;
  };

  /** The client a token request authenticates as, or a reason it does not. */
  const authenticate = (rec: Recorded, form: URLSearchParams): { id: string } | { error: string } => {
    const basic = /^Basic (.+)$/.exec(String(rec.headers.authorization ?? ""));
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, "base64")
        .toString("utf8")
        .split(":")
        .map((v) => decodeURIComponent(v.replace(/\+/g, " ")));
      const known = clients.get(id ?? "");
      return known?.secret && known.secret === secret ? { id: id! } : { error: "bad basic credentials" };
    }
    const assertion = form.get("client_assertion");
    if (assertion) {
      secrets.add(assertion);
      const id = form.get("client_id") ?? "";
      const known = clients.get(id);
      if (!known?.publicJwk) return { error: "unknown jwt client" };
      if (form.get("client_assertion_type") !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        return { error: "assertion type" };
      const checked = verifyAssertion(assertion, known.publicJwk);
      if (!checked.ok) return { error: checked.why };
      const c = checked.claims;
      if (
        c.iss !== id ||
        c.sub !== id ||
        c.aud !== origin ||
        typeof c.exp !== "number" ||
        c.exp * 1000 < Date.now()
      )
        return { error: "claims" };
      return { id };
    }
    const id = form.get("client_id") ?? "";
    const known = clients.get(id);
    if (!known) return { error: "unknown client" };
    if (known.secret) return form.get("client_secret") === known.secret ? { id } : { error: "secret" };
    return { id };
  };

  const metadata = () => {
    const doc: Record<string, unknown> = {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: options.authMethods ?? [
        "none",
        "client_secret_basic",
        "private_key_jwt",
      ],
      token_endpoint_auth_signing_alg_values_supported: ["ES256"],
    };
    if (options.registration !== false) doc.registration_endpoint = `${origin}/register`;
    if (options.dpop) doc.dpop_signing_alg_values_supported = ["ES256"];
    if (options.workloadKey || options.identityProvider)
      (doc.grant_types_supported as string[]).push(JWT_BEARER);
    if (options.scopesSupported) doc.scopes_supported = options.scopesSupported;
    if (options.metadataBytes) doc.padding = "x".repeat(options.metadataBytes);
    return doc;
  };

  const handler: Handler = (res, rec) => {
    const url = new URL(rec.path, origin);
    if (url.pathname.startsWith("/.well-known/")) {
      // Never answered: the socket stays open until the client gives up or the server closes.
      if (options.hangMetadata) return;
      if (url.pathname === "/.well-known/oauth-authorization-server")
        return options.metadataChunked ? sendChunked(res, metadata()) : send(res, 200, metadata());
      return send(res, 404, { error: "not_found" });
    }
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      authorizeRequests.push(q);
      const redirect = new URL(q.get("redirect_uri") ?? "http://127.0.0.1:1/");
      const state = options.wrongState ? "not-the-state" : (q.get("state") ?? "");
      if (options.deny || q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) {
        redirect.searchParams.set("error", "access_denied");
      } else {
        const code = canary("code");
        secrets.add(code);
        codes.set(code, {
          challenge: q.get("code_challenge")!,
          redirectUri: q.get("redirect_uri") ?? "",
          clientId: q.get("client_id") ?? "",
          scopes: (q.get("scope") ?? "").split(" ").filter(Boolean),
          resource: q.get("resource") ?? undefined,
        });
        redirect.searchParams.set("code", code);
      }
      redirect.searchParams.set("state", state);
      res.writeHead(302, { location: redirect.href }).end();
      return;
    }
    if (url.pathname === "/register" && rec.method === "POST") {
      const body = rec.body as {
        token_endpoint_auth_method?: string;
        redirect_uris?: string[];
        application_type?: string;
      };
      applicationTypes.push(body.application_type);
      const id = `dcr-${randomBytes(6).toString("hex")}`;
      const method = body.token_endpoint_auth_method ?? "client_secret_basic";
      const reg: Record<string, unknown> = { client_id: id, redirect_uris: body.redirect_uris ?? [] };
      if (method !== "none") {
        const secret = canary("cs");
        secrets.add(secret);
        clients.set(id, { secret });
        reg.client_secret = secret;
        reg.client_secret_expires_at = 0;
      } else clients.set(id, {});
      reg.token_endpoint_auth_method = method;
      return send(res, 201, reg);
    }
    if (url.pathname === "/token" && rec.method === "POST") {
      if (options.tokenRedirect) {
        res.writeHead(307, { location: options.tokenRedirect }).end();
        return;
      }
      const form = new URLSearchParams(rec.rawBody);
      tokenRequests.push(form);
      for (const k of [
        "code",
        "code_verifier",
        "refresh_token",
        "client_secret",
        "client_assertion",
        "assertion",
      ]) {
        const v = form.get(k);
        if (v) secrets.add(v);
      }
      // DPoP (RFC 9449 §5): a proof binds the token; a nonce is demanded first when asked to.
      let jkt: string | undefined;
      if (options.dpop && rec.headers.dpop !== undefined) {
        dpopProofs.push(String(rec.headers.dpop));
        const wantNonce = options.dpop.nonce || options.dpop.nonceLoop;
        const checked = checkProof(rec.headers.dpop, {
          method: "POST",
          url: `${origin}/token`,
          jtis,
          // A looping server takes no nonce it has named: each answer names another.
          ...(wantNonce ? { nonce: options.dpop.nonceLoop ? "never-named" : asNonce } : {}),
        });
        if (!checked.ok) {
          dpopErrors.push(checked.why);
          if (checked.why === "nonce") {
            if (options.dpop.nonceLoop) asNonce = `as-nonce-${++nonceCount}`;
            return send(
              res,
              400,
              { error: "use_dpop_nonce", error_description: "a nonce is required" },
              { "dpop-nonce": asNonce },
            );
          }
          return send(res, 400, { error: "invalid_dpop_proof" });
        }
        jkt = checked.jkt;
      }
      if (form.get("grant_type") === JWT_BEARER) {
        const assertion = form.get("assertion") ?? "";
        const checked = jwtGrant(assertion);
        if (!checked.ok)
          // Echoes the assertion: the client must never show it.
          return send(res, 400, {
            error: "invalid_grant",
            error_description: `${checked.why}: ${assertion}`,
          });
        if (checked.clientId !== undefined) {
          const who = authenticate(rec, form);
          if ("error" in who || who.id !== checked.clientId)
            return send(res, 401, {
              error: "invalid_client",
              error_description: "the ID-JAG names another client",
            });
        }
        const scopes = (form.get("scope") ?? "").split(" ").filter(Boolean);
        return send(
          res,
          200,
          issue(scopes, checked.clientId ?? "workload", form.get("resource") ?? undefined, false, jkt),
        );
      }
      const who = authenticate(rec, form);
      if ("error" in who)
        return send(res, 401, {
          error: "invalid_client",
          // Echoes the credentials it was given: the client must never show them.
          error_description: `${who.error}: ${rec.headers.authorization ?? ""} ${rec.rawBody}`,
        });
      const grant = form.get("grant_type");
      if (grant === "authorization_code") {
        const code = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const challenge = b64url(createHash("sha256").update(verifier).digest());
        if (
          options.rejectCodes ||
          !code ||
          code.challenge !== challenge ||
          code.redirectUri !== form.get("redirect_uri")
        )
          return send(res, 400, {
            error: "invalid_grant",
            // Echoes what it was given: the client must never show it.
            error_description: `bad code ${form.get("code")} or verifier ${verifier}`,
          });
        return send(res, 200, issue(code.scopes, who.id, form.get("resource") ?? undefined, true, jkt));
      }
      if (grant === "refresh_token") {
        const old = form.get("refresh_token") ?? "";
        const known = refreshTokens.get(old);
        if (!known) return send(res, 400, { error: "invalid_grant", error_description: `unknown ${old}` });
        refreshTokens.delete(old); // rotation: a refresh token is good for one use
        return send(res, 200, issue(known.scopes, who.id, form.get("resource") ?? undefined, true, jkt));
      }
      if (grant === "client_credentials") {
        const scopes = (form.get("scope") ?? "").split(" ").filter(Boolean);
        return send(res, 200, issue(scopes, who.id, form.get("resource") ?? undefined, false, jkt));
      }
      return send(res, 400, { error: "unsupported_grant_type" });
    }
    return send(res, 404, { error: "not_found" });
  };

  /** A JWT-bearer assertion: a workload's (signed by workloadKey) or an ID-JAG (from the identity provider). */
  function jwtGrant(jwt: string): { ok: true; clientId?: string } | { ok: false; why: string } {
    const [h, p] = jwt.split(".");
    const header = decodePart(h);
    const claims = decodePart(p);
    const idp = options.identityProvider;
    const jag = header.typ === "oauth-id-jag+jwt";
    const key = jag ? idp?.publicJwk : options.workloadKey;
    if (!key) return { ok: false, why: "untrusted issuer" };
    const checked = verifyAssertion(jwt, key);
    if (!checked.ok) return { ok: false, why: checked.why };
    if (claims.aud !== origin && claims.aud !== `${origin}/`) return { ok: false, why: "audience" };
    if (typeof claims.exp !== "number" || claims.exp * 1000 < Date.now())
      return { ok: false, why: "expired" };
    if (!jag) return { ok: true };
    if (claims.iss !== idp?.origin) return { ok: false, why: "issuer" };
    return { ok: true, clientId: String(claims.client_id) };
  }

  const server = await startHttp(handler, { path: "" });
  origin = server.origin;
  return {
    server,
    origin,
    tokens,
    secrets,
    dpopProofs,
    dpopErrors,
    applicationTypes,
    count: (path) => server.requests.filter((r) => new URL(r.path, origin).pathname === path).length,
    tokenRequests,
    authorizeRequests,
    close: () => server.close(),
  };
}

export interface ProtectedServerOptions {
  /** Scopes every request needs (sent in the 401's `scope`). */
  scopes?: string[];
  /** Tools that need more: tools/call to any tool needs these as well (403 insufficient_scope). */
  callScopes?: string[];
  /** scopes_supported in the protected-resource metadata. */
  scopesSupported?: string[];
  /** Name the metadata in the 401's WWW-Authenticate (default true). */
  resourceMetadataInHeader?: boolean;
  /** A tools/call JSON-RPC error that echoes the request's Authorization header. */
  echoAuthorization?: boolean;
  /** DPoP at the MCP server: `nonce` demands one first; `nonceLoop` names a new one every time. */
  dpop?: { nonce?: boolean; nonceLoop?: boolean };
  /** Proofs the server saw, and the reasons any failed. */
  proofs?: { seen: string[]; errors: string[]; schemes: string[] };
}

/**
 * The MCP server: the minimal legacy Streamable HTTP server behind a bearer check against the
 * authorization server's issued tokens, with protected-resource metadata at the path-based
 * well-known URL.
 */
export async function startProtectedServer(
  as: AuthServer,
  options: ProtectedServerOptions = {},
): Promise<HostileServer> {
  const inner = legacyStreamableHandler();
  const rsJtis = new Set<string>();
  let rsNonce = "rs-nonce-0";
  let rsNonceCount = 0;
  let url = "";
  let origin = "";
  const metadataUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`;
  const challenge = (extra: string) =>
    [
      "Bearer",
      [options.resourceMetadataInHeader === false ? undefined : `resource_metadata="${metadataUrl()}"`, extra]
        .filter(Boolean)
        .join(", "),
    ].join(" ");
  const server = await startHttp(async (res, rec, req) => {
    if (rec.path === "/.well-known/oauth-protected-resource/mcp") {
      const doc: Record<string, unknown> = { resource: url, authorization_servers: [as.origin] };
      if (options.scopesSupported) doc.scopes_supported = options.scopesSupported;
      return send(res, 200, doc);
    }
    if (rec.path.startsWith("/.well-known/")) return send(res, 404, { error: "not_found" });
    const header = String(rec.headers.authorization ?? "");
    const [, scheme, token] = /^(\S+) (.+)$/.exec(header) ?? [];
    if (scheme) options.proofs?.schemes.push(scheme);
    let issued = token ? as.tokens.get(token) : undefined;
    if (issued?.jkt) {
      // A bound token is good only as `DPoP` with a proof by its key (RFC 9449 §7).
      if (rec.headers.dpop !== undefined) options.proofs?.seen.push(String(rec.headers.dpop));
      const wantNonce = options.dpop?.nonce || options.dpop?.nonceLoop;
      const checked = checkProof(rec.headers.dpop, {
        method: rec.method,
        url: `${origin}${rec.path}`,
        token,
        jtis: rsJtis,
        ...(wantNonce ? { nonce: options.dpop?.nonceLoop ? "never-named" : rsNonce } : {}),
      });
      if (!checked.ok) options.proofs?.errors.push(checked.why);
      if (!checked.ok && checked.why === "nonce") {
        if (options.dpop?.nonceLoop) rsNonce = `rs-nonce-${++rsNonceCount}`;
        return send(
          res,
          401,
          { error: "use_dpop_nonce" },
          {
            "www-authenticate": `DPoP error="use_dpop_nonce", resource_metadata="${metadataUrl()}"`,
            "dpop-nonce": rsNonce,
          },
        );
      }
      if (!checked.ok || checked.jkt !== issued.jkt || scheme !== "DPoP") issued = undefined;
    } else if (scheme !== "Bearer") issued = undefined;
    const needed = options.scopes ?? [];
    if (!issued || issued.expiresAt < Date.now()) {
      const scope = needed.length ? `scope="${needed.join(" ")}"` : "";
      return send(res, 401, { error: "invalid_token" }, { "www-authenticate": challenge(scope) });
    }
    if (rec.rpcMethod === "tools/call") {
      if (options.echoAuthorization)
        return send(res, 200, {
          jsonrpc: "2.0",
          id: rec.rpcId,
          error: { code: -32000, message: `denied for ${header}; token ${token}` },
        });
      const more = options.callScopes ?? [];
      if (more.some((s) => !issued.scopes.includes(s))) {
        const all = [...new Set([...needed, ...more])].join(" ");
        return send(
          res,
          403,
          { error: "insufficient_scope" },
          { "www-authenticate": challenge(`error="insufficient_scope", scope="${all}"`) },
        );
      }
    }
    await inner(res, rec, req);
  });
  url = server.url;
  origin = server.origin;
  return server;
}

/**
 * For the suite it is called in: an authorization server (`asOptions`) and an MCP server behind
 * it (`mcpOptions`), started before its first test and handed to `receive`, closed after its last.
 */
export function protectedServerForSuite(
  receive: (as: AuthServer, mcp: HostileServer) => void,
  asOptions: AuthServerOptions = {},
  mcpOptions: ProtectedServerOptions = {},
): void {
  let started: { as: AuthServer; mcp?: HostileServer } | undefined;
  before(async () => {
    const as = await startAuthServer(asOptions);
    started = { as };
    started.mcp = await startProtectedServer(as, mcpOptions);
    receive(as, started.mcp);
  });
  after(async () => {
    await started?.mcp?.close();
    await started?.as.close();
  });
}

/** The tokens `store` holds for the server at `url` (failing the test when it holds none). */
export async function storedTokens(store: MemoryTokenStore, url: string): Promise<ServerTokens> {
  const record = await store.get(serverKey(new URL(url)));
  assert.equal(record?.kind, "tokens");
  return record as ServerTokens;
}

/** connect() to the MCP server `mcp`, with no remembered era, and these settings (its `auth`, ...). */
export function connectTo(
  mcp: { url: string },
  settings: Omit<HttpTarget, "url"> & ConnectSettings,
): Promise<Client> {
  return connect({ url: mcp.url, eraHints: false, ...settings });
}

/**
 * Runs `body` against a fresh authorization server (`asOptions`) and an MCP server behind it
 * (`mcpOptions`), and closes both afterwards, whether `body` passed or failed.
 */
export async function withProtectedServer<T>(
  asOptions: AuthServerOptions,
  mcpOptions: ProtectedServerOptions,
  body: (as: AuthServer, mcp: HostileServer) => Promise<T>,
): Promise<T> {
  const as = await startAuthServer(asOptions);
  try {
    const mcp = await startProtectedServer(as, mcpOptions);
    try {
      return await body(as, mcp);
    } finally {
      await mcp.close();
    }
  } finally {
    await as.close();
  }
}

/**
 * Stands in for the user's browser: follows the authorization URL's redirects with fetch until
 * the loopback redirect has been delivered. Records each URL it opened.
 */
export function browser(opened: string[] = []): (url: string, signal: AbortSignal) => Promise<void> {
  return async (url, signal) => {
    opened.push(url);
    let next = url;
    for (let hops = 0; hops < 5; hops++) {
      const response = await fetch(next, { redirect: "manual", signal });
      await response.body?.cancel();
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return;
      next = new URL(location, next).href;
    }
  };
}
