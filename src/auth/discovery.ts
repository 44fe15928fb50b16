import * as oauth from "oauth4webapi";
import { authError } from "../errors/failures.ts";
import { type AuthFetchContext, assertSecureEndpoint, authFetch } from "./auth-fetch.ts";

/** Where the authorization server was found, and what it said about itself. */
export interface Discovered {
  /** The resource indicator for token requests (RFC 8707): the metadata's resource, or the server's URI. */
  resource: string;
  /** The authorization server's metadata, validated by oauth4webapi. */
  as: oauth.AuthorizationServer;
  /** The protected resource's `scopes_supported`, when it has metadata that lists them. */
  scopesSupported: string[] | undefined;
  /**
   * Which rules found it: protected-resource metadata (2025-06-18 and later), or the 2025-03-26
   * rules (metadata at the server's root, else the default endpoints there).
   */
  via: "protected_resource" | "2025-03-26_metadata" | "2025-03-26_defaults";
}

/**
 * The canonical URI of an MCP server as a resource indicator: no fragment, no query (a query may
 * hold a key), and no trailing slash on a bare origin (MCP authorization, canonical server URI).
 */
export function canonicalResource(server: URL): string {
  const u = new URL(server.href);
  u.hash = "";
  u.search = "";
  return u.pathname === "/" ? u.origin : u.href;
}

/** Whether metadata naming `resource` may speak for `server`: same origin, and a path prefix of it. */
export function resourceCovers(resource: string, server: URL): boolean {
  let r: URL;
  try {
    r = new URL(resource);
  } catch {
    return false;
  }
  if (r.origin !== server.origin || r.hash !== "") return false;
  const base = r.pathname.replace(/\/+$/, "");
  return base === "" || server.pathname === base || server.pathname.startsWith(`${base}/`);
}

/** The well-known protected-resource metadata URLs for a server, path-based first (RFC 9728 §3.1). */
export function protectedResourceUrls(server: URL): URL[] {
  const path = server.pathname.replace(/\/+$/, "");
  const urls = [new URL("/.well-known/oauth-protected-resource", server.origin)];
  if (path !== "") urls.unshift(new URL(`/.well-known/oauth-protected-resource${path}`, server.origin));
  return urls;
}

/**
 * The metadata URLs for an issuer, in the order MCP prescribes: RFC 8414 path insertion, OpenID
 * Connect path insertion, OpenID Connect path appending (the last two only for issuers with a path).
 */
export function authorizationServerUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  if (path === "") {
    return [
      new URL("/.well-known/oauth-authorization-server", issuer.origin),
      new URL("/.well-known/openid-configuration", issuer.origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
    new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
    new URL(`${path}/.well-known/openid-configuration`, issuer.origin),
  ];
}

function get(ctx: AuthFetchContext, url: URL): Promise<Response> {
  return authFetch(ctx)(url.href, { method: "GET", headers: { accept: "application/json" } });
}

async function jsonOf(response: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const doc: unknown = await response.clone().json();
    return typeof doc === "object" && doc !== null && !Array.isArray(doc)
      ? (doc as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
}

/** The protected-resource metadata: from the challenge's URL, else the well-known ones. */
async function protectedResource(
  server: URL,
  fromChallenge: string | undefined,
  ctx: AuthFetchContext,
): Promise<oauth.ResourceServer | undefined> {
  const candidates = protectedResourceUrls(server);
  if (fromChallenge) {
    try {
      candidates.unshift(new URL(fromChallenge, server));
    } catch {
      // An unparseable URL in the challenge: the well-known ones remain.
    }
  }
  for (const url of candidates) {
    assertSecureEndpoint(url, ctx.redactor);
    const response = await get(ctx, url);
    if (response.status !== 200) continue;
    const doc = await jsonOf(response);
    if (typeof doc?.resource !== "string") continue;
    if (!resourceCovers(doc.resource, server)) {
      throw authError(
        "resource_mismatch",
        "the server's protected-resource metadata names another resource; refused",
        { redactor: ctx.redactor, httpStatus: 401 },
      );
    }
    try {
      return await oauth.processResourceDiscoveryResponse(new URL(doc.resource), response);
    } catch {
      // Not conforming metadata: try the next place.
    }
  }
  return undefined;
}

/** An authorization server's metadata, at the first of its well-known URLs that answers for it. */
async function authorizationServer(issuer: URL, ctx: AuthFetchContext): Promise<oauth.AuthorizationServer> {
  let mismatch = false;
  for (const url of authorizationServerUrls(issuer)) {
    const response = await get(ctx, url);
    if (response.status !== 200) continue;
    try {
      return await oauth.processDiscoveryResponse(issuer, response);
    } catch (error) {
      // A document naming another issuer is never used (RFC 8414 §3.3).
      if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON)
        mismatch = true;
    }
  }
  throw mismatch
    ? authError("bad_metadata", "the authorization server's metadata named another issuer; refused", {
        redactor: ctx.redactor,
      })
    : authError("no_metadata", "no authorization server metadata was found", { redactor: ctx.redactor });
}

/**
 * The 2025-03-26 rules, for servers without protected-resource metadata: the authorization base
 * URL is the server's origin; its RFC 8414 metadata is used if it has some, else the default
 * endpoints there. The metadata is found from the server itself rather than from an issuer
 * identifier, so its issuer is only required to be on the server's own origin.
 */
async function legacyAuthorizationServer(server: URL, ctx: AuthFetchContext): Promise<Discovered> {
  const base = new URL(server.origin);
  const resource = canonicalResource(server);
  const response = await get(ctx, new URL("/.well-known/oauth-authorization-server", base));
  if (response.status === 200) {
    const doc = await jsonOf(response);
    let issuer: URL | undefined;
    try {
      issuer = typeof doc?.issuer === "string" ? new URL(doc.issuer) : undefined;
    } catch {
      issuer = undefined;
    }
    if (!issuer || issuer.origin !== base.origin)
      throw authError("bad_metadata", "the server's authorization metadata named another origin; refused", {
        redactor: ctx.redactor,
      });
    const as = await oauth.processDiscoveryResponse(issuer, response);
    return { resource, as, scopesSupported: undefined, via: "2025-03-26_metadata" };
  }
  if (response.status !== 404)
    throw authError("no_metadata", `the server's authorization metadata answered HTTP ${response.status}`, {
      redactor: ctx.redactor,
    });
  const as: oauth.AuthorizationServer = {
    issuer: base.origin,
    authorization_endpoint: new URL("/authorize", base).href,
    token_endpoint: new URL("/token", base).href,
    registration_endpoint: new URL("/register", base).href,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
  };
  return { resource, as, scopesSupported: undefined, via: "2025-03-26_defaults" };
}

/**
 * Finds the authorization server for an MCP server, per the authorization spec of each era:
 * protected-resource metadata (from the challenge's `resource_metadata`, else the well-known
 * URLs), then the authorization server's metadata (RFC 8414, then OpenID discovery). A server
 * without protected-resource metadata whose challenge did not name any gets the 2025-03-26 rules.
 * Every request is bounded by `ctx` (the deadline's signal and a byte ceiling).
 */
export async function discover(
  server: URL,
  resourceMetadata: string | undefined,
  ctx: AuthFetchContext,
): Promise<Discovered> {
  const prm = await protectedResource(server, resourceMetadata, ctx);
  if (!prm) {
    if (resourceMetadata)
      throw authError("no_metadata", "the server's protected-resource metadata could not be read", {
        redactor: ctx.redactor,
        httpStatus: 401,
      });
    return await legacyAuthorizationServer(server, ctx);
  }
  const servers = stringList(prm.authorization_servers) ?? [];
  if (servers.length === 0)
    throw authError("no_metadata", "the server's protected-resource metadata names no authorization server", {
      redactor: ctx.redactor,
    });
  let last: unknown;
  for (const entry of servers) {
    let issuer: URL;
    try {
      issuer = new URL(entry);
    } catch {
      continue;
    }
    try {
      assertSecureEndpoint(issuer, ctx.redactor);
      const as = await authorizationServer(issuer, ctx);
      return {
        resource: prm.resource,
        as,
        scopesSupported: stringList(prm.scopes_supported),
        via: "protected_resource",
      };
    } catch (error) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      last = error;
    }
  }
  throw (
    last ?? authError("no_metadata", "no usable authorization server was found", { redactor: ctx.redactor })
  );
}
