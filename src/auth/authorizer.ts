import type * as oauth from "oauth4webapi";
import { authError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { raceAbort, timeoutSignal } from "../lifecycle/abort.ts";
import type { Clock } from "../lifecycle/clock.ts";
import type { FetchFn } from "../options/deps.ts";
import type { ResolvedAuth } from "../options/resolve-auth.ts";
import type { ServerTokens, TokenStore } from "../options/token-store.ts";
import { LATEST_LEGACY_VERSION, rank } from "../protocol/versions.ts";
import { exchangeForIdJag, jwtBearer } from "./assertion-grants.ts";
import { type AuthFetchContext, MAX_AUTH_RESPONSE_BYTES } from "./auth-fetch.ts";
import {
  type BearerChallenge,
  bearerChallenge,
  dpopNonceChallenge,
  scopeList,
  unionScopes,
} from "./challenge.ts";
import { type Discovered, discover, resourceCovers } from "./discovery.ts";
import { DpopKey, newDpopKey } from "./dpop.ts";
import { authorizationCode, clientCredentials, refresh, type TokenSet } from "./flows.ts";
import { LoopbackRedirect } from "./loopback.ts";
import { type ChosenClient, chooseClient, clientAuth, registeredPort } from "./registration.ts";
import { clientKey, processTokenStore, serverKey } from "./token-store.ts";

export interface AuthorizerEnv {
  server: URL;
  /** The caller's fetch: authorization requests go straight through it. */
  fetch: FetchFn;
  redactor: Redactor;
  /** The discovery phase's byte ceiling; authorization responses get at most 1 MiB of it. */
  maxResponseBytes: number;
  /** The discovery phase's time budget: no authorization runs longer, whatever asked for it. */
  timeoutMs: number;
  clock: Clock;
  /**
   * The newest protocol version this connection may speak. A dynamic registration for a version
   * after 2025-11-25 must name its `application_type`; older ones leave it out.
   */
  protocolCeiling?: string;
}

/** An access token this close to its expiry is refreshed rather than sent. */
export const EXPIRY_MARGIN_MS = 10_000;
/** Authorizations one request may trigger: a sign-in and one step-up, or two step-ups. */
export const MAX_AUTHORIZATIONS_PER_REQUEST = 2;

function expired(t: { expiresAt?: number }): boolean {
  return t.expiresAt !== undefined && Date.now() >= t.expiresAt - EXPIRY_MARGIN_MS;
}

/**
 * Holds one server's authorization for the transports: the token to send (loaded from the
 * store, refreshed before it expires), and the answer to a 401 or a 403 `insufficient_scope`:
 * discovery and the configured flow, or a refusal with a reason. One authorization runs at a
 * time; requests that are challenged meanwhile wait for it, each within its own signal.
 */
export class Authorizer {
  readonly #o: ResolvedAuth;
  readonly #env: AuthorizerEnv;
  readonly #key: string;
  readonly #store: TokenStore | undefined;
  #tokens: ServerTokens | undefined;
  #loaded = false;
  /** Scopes asked for last time: a step-up asks for these and the challenge's together. */
  #requested: string[] = [];
  #inflight: Promise<string> | undefined;
  /** The DPoP key the held tokens are bound to, imported from their record. */
  #dpop: DpopKey | undefined;
  /** The MCP server's latest DPoP nonce (RFC 9449 §9), sent in every proof until it names another. */
  #resourceNonce: string | undefined;

  constructor(options: ResolvedAuth, env: AuthorizerEnv) {
    this.#o = options;
    this.#env = env;
    this.#key = serverKey(env.server);
    this.#store = options.store === "process" ? processTokenStore : options.store;
  }

  /** Whether requests to this URL carry the server's token (its own origin only). */
  covers(url: URL): boolean {
    return url.origin === this.#env.server.origin;
  }

  /**
   * The Authorization header (and DPoP proof) that present `token` on a request to the server:
   * `Bearer`, or `DPoP` with a fresh proof for this method and URL when the token is bound.
   */
  async credentials(token: string, method: string, url: URL): Promise<Record<string, string>> {
    const t = this.#tokens;
    if (t?.accessToken !== token || t.tokenType !== "DPoP" || !t.dpopKey)
      return { authorization: `Bearer ${token}` };
    this.#dpop ??= await DpopKey.from(t.dpopKey, this.#env.redactor);
    return {
      authorization: `DPoP ${token}`,
      dpop: await this.#dpop.proof(method, url, token, this.#resourceNonce),
    };
  }

  /**
   * Notes the MCP server's DPoP nonce from a response, and says whether the response is a
   * `use_dpop_nonce` challenge that a retry with the new nonce may answer.
   */
  nonceChallenged(response: Response): boolean {
    const nonce = response.headers.get("dpop-nonce");
    const fresh = nonce !== null && nonce !== "" && nonce.length <= 1024 && nonce !== this.#resourceNonce;
    if (fresh) this.#resourceNonce = nonce;
    return (
      response.status === 401 &&
      this.#tokens?.tokenType === "DPoP" &&
      fresh &&
      dpopNonceChallenge(response.headers.get("www-authenticate"))
    );
  }

  /** Whether a token is held (a background stream never starts a sign-in when one is). */
  get holdsToken(): boolean {
    return this.#tokens !== undefined;
  }

  /**
   * The token to send now. An expired one is refreshed first when `refreshAllowed` (requests with
   * a deadline); one that cannot be is dropped, or in `stored-only` mode fails at once.
   */
  async tokenFor(signal: AbortSignal | undefined, refreshAllowed: boolean): Promise<string | undefined> {
    await this.#load();
    const t = this.#tokens;
    if (!t) return undefined;
    if (!expired(t) || !refreshAllowed) return t.accessToken;
    if (t.refreshToken) {
      const refreshed = await this.#tryRefresh(signal);
      if (refreshed) return refreshed;
    }
    if (this.#o.mode === "stored-only")
      throw authError("expired", "the stored token has expired and cannot be refreshed; sign in again", {
        redactor: this.#env.redactor,
      });
    await this.#forget();
    return undefined;
  }

  /**
   * Answers a 401 or 403 from the MCP server. Returns the token to retry the request with, or
   * undefined when the response should stand (a plain 403; a background stream). Throws an
   * `unauthorized` or `forbidden` TetherError when authorization cannot be had.
   */
  async challenged(
    status: number,
    header: string | null,
    sent: string | undefined,
    signal: AbortSignal | undefined,
    request: { flows: boolean; round: number },
  ): Promise<string | undefined> {
    const challenge = bearerChallenge(header);
    const redactor = this.#env.redactor;
    // A background stream or a closing request never changes what is held: its refusal stands.
    if (!request.flows) return undefined;
    // A newer token than the one this request carried is already here: retry with it.
    const held = this.#tokens;
    const newer = held && held.accessToken !== sent && !expired(held) ? held.accessToken : undefined;
    if (status === 403) {
      if (challenge?.error !== "insufficient_scope") return undefined;
      if (newer && request.round < MAX_AUTHORIZATIONS_PER_REQUEST) return newer;
      const needed = unionScopes(this.#requested, challenge.scopes);
      const granted = scopeList(this.#tokens?.scope);
      const hopeless = challenge.scopes !== undefined && needed.every((s) => granted.includes(s));
      if (this.#o.mode === "stored-only" || hopeless || request.round >= MAX_AUTHORIZATIONS_PER_REQUEST) {
        throw authError("insufficient_scope", "the token lacks a scope this request needs", {
          redactor,
          httpStatus: 403,
        });
      }
      return await this.#once(() => this.#authorize(challenge, needed, signal), signal);
    }
    if (newer && request.round < MAX_AUTHORIZATIONS_PER_REQUEST) return newer;
    if (request.round >= MAX_AUTHORIZATIONS_PER_REQUEST)
      throw authError("token_rejected", "the server rejected the token it was just issued", {
        redactor,
        httpStatus: 401,
      });
    if (held && held.accessToken === sent) {
      if (held.refreshToken) {
        const refreshed = await this.#tryRefresh(signal);
        if (refreshed) return refreshed;
      }
      if (this.#o.mode === "stored-only")
        throw authError("token_rejected", "the server rejected the stored token; sign in again", {
          redactor,
          httpStatus: 401,
        });
      await this.#forget();
    }
    if (this.#o.mode === "stored-only")
      throw authError("login_required", "the server requires authorization and no token is stored", {
        redactor,
        httpStatus: 401,
      });
    return await this.#once(() => this.#authorize(challenge, undefined, signal), signal);
  }

  /** Forgets the held token and its stored copy (the client registration stays). */
  async #forget(): Promise<void> {
    this.#tokens = undefined;
    this.#dpop = undefined;
    try {
      await this.#store?.delete(this.#key);
    } catch {
      // The next load finds it again and the server refuses it again: no harm beyond a round trip.
    }
  }

  async #load(): Promise<void> {
    if (this.#loaded) return;
    this.#loaded = true;
    let record: Awaited<ReturnType<TokenStore["get"]>>;
    try {
      record = await this.#store?.get(this.#key);
    } catch {
      record = undefined;
    }
    if (record?.kind !== "tokens" || !resourceCovers(record.resource, this.#env.server)) return;
    this.#env.redactor.learn([record.accessToken, ...(record.refreshToken ? [record.refreshToken] : [])]);
    if (record.dpopKey && typeof record.dpopKey.d === "string") this.#env.redactor.learn([record.dpopKey.d]);
    this.#tokens = record;
    this.#requested = scopeList(record.scope);
  }

  async #save(tokens: ServerTokens, dpop?: DpopKey): Promise<void> {
    this.#tokens = tokens;
    this.#dpop = dpop;
    try {
      await this.#store?.set(this.#key, tokens);
    } catch {
      // Unsaved, the token still serves this connection.
    }
  }

  /** One authorization at a time; others wait for it within their own signal. */
  async #once(run: () => Promise<string>, signal: AbortSignal | undefined): Promise<string> {
    if (!this.#inflight) {
      this.#inflight = run().finally(() => {
        this.#inflight = undefined;
      });
    }
    return signal ? await raceAbort(this.#inflight, signal) : await this.#inflight;
  }

  /** Runs `fn` on a context bounded by the request's signal and the discovery budget. */
  async #bounded<T>(signal: AbortSignal | undefined, fn: (ctx: AuthFetchContext) => Promise<T>): Promise<T> {
    const { timeoutMs, clock, redactor, fetch } = this.#env;
    const cap = timeoutSignal(clock, timeoutMs, new Interrupt("stage", "auth_timeout", timeoutMs), signal);
    try {
      return await fn({
        fetch,
        signal: cap.signal,
        redactor,
        maxBytes: Math.min(this.#env.maxResponseBytes, MAX_AUTH_RESPONSE_BYTES),
      });
    } catch (error) {
      if (cap.signal.aborted) throw cap.signal.reason;
      throw error;
    } finally {
      cap.dispose();
    }
  }

  /** Refreshes the held token; undefined (and the token forgotten) if the server refused the grant. */
  async #tryRefresh(signal: AbortSignal | undefined): Promise<string | undefined> {
    try {
      return await this.#once(() => this.#refresh(signal), signal);
    } catch (error) {
      if (!(error instanceof TetherError) || error.code !== "unauthorized") throw error;
      // A refresh token the server no longer honours is dead; other refusals may be ours to fix.
      if (this.#o.mode === "stored-only") {
        if (error.reason === "invalid_grant") await this.#forget();
        throw error;
      }
      await this.#forget();
      return undefined;
    }
  }

  async #refresh(signal: AbortSignal | undefined): Promise<string> {
    const t = this.#tokens;
    if (!t?.refreshToken)
      throw authError("expired", "the token cannot be refreshed", { redactor: this.#env.redactor });
    const current = { ...t, refreshToken: t.refreshToken };
    return await this.#bounded(signal, async (ctx) => {
      const as: oauth.AuthorizationServer = { issuer: t.issuer, token_endpoint: t.tokenEndpoint };
      const client = await this.#storedClient(t);
      const dpop = t.dpopKey ? (this.#dpop ?? (await DpopKey.from(t.dpopKey, ctx.redactor))) : undefined;
      const next = await refresh(as, client, current, t.resource, ctx, dpop);
      await this.#save({ ...t, ...next }, dpop);
      return next.accessToken;
    });
  }

  /** The client that obtained stored tokens, with its credentials from the options or the store. */
  async #storedClient(t: ServerTokens): Promise<ChosenClient> {
    const c = this.#o.client;
    let secret = c.clientId === t.clientId ? c.clientSecret : undefined;
    const jwk = c.clientId === t.clientId ? c.privateKeyJwk : undefined;
    if (c.clientId !== t.clientId) {
      const registered = await this.#store?.get(clientKey(t.issuer));
      if (registered?.kind === "client" && registered.clientId === t.clientId)
        secret = registered.clientSecret;
    }
    if (secret) this.#env.redactor.learn([secret]);
    return {
      client: { client_id: t.clientId, token_endpoint_auth_method: t.authMethod },
      method: t.authMethod,
      auth: await clientAuth(t.authMethod, secret, jwk),
      kind: c.clientId === t.clientId ? "pre_registered" : "dynamic",
    };
  }

  /** Scopes for a first authorization: configured, else the challenge's, else the metadata's. */
  #scopes(
    challenge: BearerChallenge | undefined,
    found: Discovered,
    stepUp: string[] | undefined,
  ): string[] | undefined {
    let scopes = stepUp ?? this.#o.scopes ?? challenge?.scopes ?? found.scopesSupported;
    // A client that wants refresh tokens may ask for offline_access where the server lists it.
    if (
      scopes?.length &&
      this.#o.grant === "authorization_code" &&
      found.as.scopes_supported?.includes("offline_access")
    )
      scopes = unionScopes(scopes, ["offline_access"]);
    return scopes?.length ? scopes : undefined;
  }

  /** Discovery and the configured flow; the tokens are kept and stored. */
  async #authorize(
    challenge: BearerChallenge | undefined,
    stepUp: string[] | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const o = this.#o;
    if (o.grant === "authorization_code" && !o.openUrl)
      throw authError(
        "login_required",
        "signing in needs auth.openUrl to send the user to the authorization page",
        {
          redactor: this.#env.redactor,
          httpStatus: 401,
        },
      );
    return await this.#bounded(signal, async (ctx) => {
      const found = await discover(this.#env.server, challenge?.resourceMetadata, ctx);
      const { as } = found;
      if (typeof as.token_endpoint !== "string")
        throw authError("bad_metadata", "the authorization server has no token endpoint", {
          redactor: ctx.redactor,
        });
      const tokenEndpoint = as.token_endpoint;
      const scopes = this.#scopes(challenge, found, stepUp);
      // A new sign-in keeps the key the held tokens are bound to, so one key serves the server.
      const dpop = o.dpop
        ? (this.#dpop ?? (await DpopKey.from(this.#tokens?.dpopKey ?? (await newDpopKey()), ctx.redactor)))
        : undefined;
      let client: ChosenClient;
      let tokens: TokenSet;
      if (o.grant === "client_credentials") {
        client = await chooseClient(as, o.client, undefined, this.#store, ctx);
        tokens = await clientCredentials(as, client, found.resource, scopes, ctx, dpop);
      } else if (o.grant === "jwt_bearer" || o.grant === "token_exchange") {
        client = await this.#assertionClient(as, ctx);
        let assertion = await o.assertion!(ctx.signal);
        ctx.redactor.learn([assertion]);
        if (o.grant === "token_exchange")
          assertion = await exchangeForIdJag(
            o.identityProvider!,
            assertion,
            as.issuer,
            found.resource,
            scopes,
            ctx,
          );
        tokens = await jwtBearer(as, client, assertion, found.resource, scopes, ctx, dpop);
      } else {
        const redirect = await LoopbackRedirect.open(
          o.redirectPort,
          await registeredPort(as.issuer, this.#store),
        );
        try {
          client = await chooseClient(as, this.#registering(), redirect.redirectUri, this.#store, ctx);
          tokens = await authorizationCode(
            { as, client, redirect, resource: found.resource, scopes, openUrl: o.openUrl!, dpop },
            ctx,
          );
        } finally {
          await redirect.close();
        }
      }
      this.#requested = scopes ?? [];
      await this.#save(
        {
          kind: "tokens",
          resource: found.resource,
          issuer: as.issuer,
          tokenEndpoint,
          clientId: client.client.client_id,
          authMethod: client.method,
          ...tokens,
          ...(dpop && tokens.tokenType === "DPoP" ? { dpopKey: dpop.jwk } : {}),
        },
        dpop,
      );
      return tokens.accessToken;
    });
  }

  /**
   * The client configuration a dynamic registration uses: `application_type` as the caller set
   * it, else `native` (we are an app on the user's machine with a loopback redirect) when the
   * protocol version in play is newer than 2025-11-25, which requires it; older ones leave it out.
   */
  #registering(): ResolvedAuth["client"] {
    const c = this.#o.client;
    if (c.applicationType) return c;
    const ceiling = this.#env.protocolCeiling;
    const modern = ceiling !== undefined && rank(ceiling) > rank(LATEST_LEGACY_VERSION);
    return modern ? { ...c, applicationType: "native" } : c;
  }

  /**
   * The client of a JWT-bearer grant: the configured one, authenticating as configured, or none
   * at all (a workload identity assertion identifies the caller by itself, RFC 7523 §3.1).
   */
  async #assertionClient(as: oauth.AuthorizationServer, ctx: AuthFetchContext): Promise<ChosenClient> {
    if (this.#o.client.clientId) return await chooseClient(as, this.#o.client, undefined, this.#store, ctx);
    return {
      client: { client_id: "unnamed", token_endpoint_auth_method: "none" },
      method: "none",
      // No client authentication and no client_id: the grant names no client.
      auth: () => {},
      kind: "pre_registered",
    };
  }
}
