// A local OAuth 2.1 authorization server and an MCP server it protects, both on 127.0.0.1 port 0,
// for the authorization tests. The authorization server serves RFC 8414 metadata, /authorize
// (approves at once, or denies, by redirecting to the redirect_uri), /token (authorization code
// with PKCE S256 verified, refresh with rotation, client credentials with client_secret_basic or
// private_key_jwt verified with node:crypto) and /register (RFC 7591). The MCP server is the
// legacy Streamable HTTP one from hostile.ts behind a bearer check that answers 401 with
// `resource_metadata` and `scope`, and 403 `insufficient_scope` for tools that need more.
//
// Every value the servers issue or receive carries "CANARY" so tests can look for it anywhere.

import type { JsonWebKey } from "node:crypto";
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import type { ServerResponse } from "node:http";
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
}

export interface IssuedToken {
  scopes: string[];
  expiresAt: number;
  resource: string | undefined;
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
  close(): Promise<void>;
}

const canary = (kind: string) => `${kind}-CANARY-${randomBytes(12).toString("hex")}`;

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
  let origin = "";

  const issue = (asked: string[], clientId: string, resource: string | undefined, withRefresh: boolean) => {
    const scopes = options.grantNoScopes ? [] : asked;
    const access = canary("at");
    const expiresIn = options.expiresIn ?? 3600;
    tokens.set(access, { scopes, expiresAt: Date.now() + expiresIn * 1000, resource });
    secrets.add(access);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: "Bearer",
      expires_in: expiresIn,
      scope: scopes.join(" "),
    };
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
      const body = rec.body as { token_endpoint_auth_method?: string; redirect_uris?: string[] };
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
      const form = new URLSearchParams(rec.rawBody);
      tokenRequests.push(form);
      for (const k of ["code", "code_verifier", "refresh_token", "client_secret", "client_assertion"]) {
        const v = form.get(k);
        if (v) secrets.add(v);
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
        return send(res, 200, issue(code.scopes, who.id, form.get("resource") ?? undefined, true));
      }
      if (grant === "refresh_token") {
        const old = form.get("refresh_token") ?? "";
        const known = refreshTokens.get(old);
        if (!known) return send(res, 400, { error: "invalid_grant", error_description: `unknown ${old}` });
        refreshTokens.delete(old); // rotation: a refresh token is good for one use
        return send(res, 200, issue(known.scopes, who.id, form.get("resource") ?? undefined, true));
      }
      if (grant === "client_credentials") {
        const scopes = (form.get("scope") ?? "").split(" ").filter(Boolean);
        return send(res, 200, issue(scopes, who.id, form.get("resource") ?? undefined, false));
      }
      return send(res, 400, { error: "unsupported_grant_type" });
    }
    return send(res, 404, { error: "not_found" });
  };

  const server = await startHttp(handler, { path: "" });
  origin = server.origin;
  return {
    server,
    origin,
    tokens,
    secrets,
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
    const token = /^Bearer (.+)$/.exec(header)?.[1];
    const issued = token ? as.tokens.get(token) : undefined;
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
