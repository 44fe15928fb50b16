import type { JsonWebKey } from "node:crypto";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import type { EraHintStore } from "../protocol/era-hints.ts";
import type { Deps } from "./deps.ts";
import type { ClientHandlers } from "./handlers.ts";
import type { OutputValidator } from "./output-validator.ts";
import type { RecoveryPolicy, TransientRetryPolicy } from "./recovery-policy.ts";
import type { TokenStore } from "./token-store.ts";

/** An OpenTelemetry `TracerProvider` (typed by shape: the peer's types are not needed to compile). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): unknown;
}

/** An OpenTelemetry `MeterProvider` (typed by shape, like `TracerProviderLike`). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: { schemaUrl?: string }): unknown;
}

/** Where `tracing` sends what it records; each defaults to the one registered globally. */
export interface TracingOptions {
  tracerProvider?: TracerProviderLike;
  meterProvider?: MeterProviderLike;
}

/** A phase's own budget; each field overrides the baseline for that phase only. */
export interface PhaseBudget {
  /** Time budget of the phase, in ms. Discovery: the whole establishment deadline. Call: each call's deadline. */
  timeoutMs?: number;
  /** Byte ceiling for one response in the phase, raw bytes as received. */
  maxResponseBytes?: number;
}

/**
 * OAuth 2.1 for remote servers (the MCP authorization spec). Requests carry a bearer token; a 401
 * (or a 403 `insufficient_scope`) runs discovery and the configured flow within the request's
 * own deadline, then the request is sent once more. No token, code, verifier, client secret or
 * assertion ever appears in an error, an event or the CLI's output.
 */
export interface AuthOptions {
  /**
   * `interactive` (default): any flow may run when the server asks. `stored-only`: only a stored
   * token (refreshed when it can be); without one a 401 fails `unauthorized` at once, with no
   * request to the authorization server. `off`: no authorization at all.
   */
  mode?: "interactive" | "stored-only" | "off";
  /**
   * `authorization_code` (default): the user signs in through `openUrl`, with PKCE and a loopback
   * redirect. `client_credentials`: the client acts on its own behalf (needs `clientId` and
   * `clientSecret` or `privateKeyJwk`). `jwt_bearer`: the `assertion` (a JWT, e.g. a workload
   * identity token) is presented with the JWT-bearer grant (RFC 7523). `token_exchange`:
   * enterprise-managed authorization: the `assertion` (the user's ID token from the enterprise
   * identity provider) is exchanged at `identityProvider` for an identity assertion grant
   * (RFC 8693), which is then presented with the JWT-bearer grant (needs `clientId`).
   */
  grant?: "authorization_code" | "client_credentials" | "jwt_bearer" | "token_exchange";
  /**
   * The JWT the `jwt_bearer` and `token_exchange` grants present: the value, or a function that
   * reads a fresh one each time a token is needed (a rotating workload token, say). Never shown.
   */
  assertion?: string | ((signal: AbortSignal) => string | Promise<string>);
  /** The enterprise identity provider of the `token_exchange` grant. */
  identityProvider?: {
    /** Its token endpoint, where the ID token is exchanged (HTTPS, or loopback HTTP). */
    tokenEndpoint: string;
    /** This client's ID at the identity provider. */
    clientId?: string;
    /** This client's secret there (client_secret_basic). Never shown. */
    clientSecret?: string;
  };
  /**
   * Sender-constrained tokens (DPoP, RFC 9449): token requests carry a proof signed by a key of
   * this client, the tokens issued are bound to it, and every request to the server presents the
   * token with the `DPoP` scheme and a fresh proof, retrying once with a nonce the server asks
   * for. The key (ES256) is made at the first sign-in and kept in the token store with the tokens
   * it is bound to: a secret like them. Default false.
   */
  dpop?: boolean;
  /**
   * `application_type` in a dynamic client registration: `native` (an app on the user's machine,
   * with a loopback redirect) or `web`. Default: `native` when the protocol version in play is
   * newer than 2025-11-25 (which requires the field), and the field left out for older ones.
   */
  applicationType?: "native" | "web";
  /** A pre-registered client; without one, a metadata document or dynamic registration is used. */
  clientId?: string;
  /** The pre-registered client's secret (basic or post, as the server supports). Never shown. */
  clientSecret?: string;
  /** The pre-registered client's private key, for `private_key_jwt` (RFC 7523). Never shown. */
  privateKeyJwk?: JsonWebKey;
  /** An HTTPS URL (with a path) serving this client's metadata document; used where the server supports them. */
  clientMetadataUrl?: string;
  /** Scopes to ask for, space-separated, instead of those the server's challenge or metadata name. */
  scope?: string;
  /** The loopback port for the redirect (1 to 65535; default: any free port). */
  redirectPort?: number;
  /**
   * Sends the user to the authorization URL: open a browser, print it, or (in tests) follow it.
   * Called once per sign-in; its promise is not awaited, and the wait for the redirect is bounded
   * by the request's deadline. Required for `authorization_code` in `interactive` mode.
   */
  openUrl?: (url: string, signal: AbortSignal) => void | Promise<void>;
  /**
   * Where tokens and dynamic registrations are kept, per server and authorization server
   * (default: in memory for this process; `false`: for this connection only).
   */
  tokenStore?: TokenStore | false;
}

/**
 * An HTTP server: its MCP endpoint and how to reach it. The stdio fields are typed `never` here,
 * so an object that names both a `url` and a `command` does not compile.
 */
export interface HttpTarget {
  /**
   * The server's MCP endpoint (http or https). Credentials in it (`https://user:password@host/mcp`)
   * are sent as `Authorization: Basic` on every request and removed from the URL actually fetched;
   * both parts are secrets, redacted everywhere. They cannot be combined with an `Authorization`
   * header or with `auth` (a config error names which). Redirects are followed only within the
   * URL's origin (see the fetch policy).
   */
  url: string | URL;
  /** Headers sent on every HTTP request; their values are treated as secrets in all output. */
  headers?: Record<string, string>;
  /** `auto` (default) follows the spec's detection; the others skip it. */
  transport?: "auto" | "streamable-http" | "sse";
  /** OAuth 2.1 authorization; none unless given. */
  auth?: AuthOptions;
  command?: never;
  args?: never;
  env?: never;
  cwd?: never;
  inheritEnv?: never;
  serverStderr?: never;
}

/**
 * A stdio server: the process to start and its environment. The HTTP fields are typed `never`
 * here, so an object that names both a `command` and a `url` does not compile.
 */
export interface StdioTarget {
  /** The program to start (looked up on PATH); the server speaks MCP on its stdin and stdout. */
  command: string;
  /** Its arguments, passed as they are (no shell). */
  args?: readonly string[];
  /** Extra environment (on top of what is inherited); values are treated as secrets. */
  env?: Record<string, string>;
  /** Its working directory (default: ours). */
  cwd?: string;
  /**
   * How much of this process's environment the server inherits: `safe` (default: PATH, HOME,
   * the locale and the like, no credentials) or `all`. `env` is added on top either way.
   */
  inheritEnv?: "safe" | "all";
  /** The server's stderr is its log: dropped (default) or passed through to ours. */
  serverStderr?: "ignore" | "inherit";
  url?: never;
  headers?: never;
  transport?: never;
  auth?: never;
}

/**
 * What `connect()` takes: exactly one target, an HTTP server (`HttpTarget`, by `url`) or a stdio
 * server (`StdioTarget`, by `command`), and the settings that apply to either. The compiler
 * checks "one of url or command"; a JavaScript caller that passes both or neither still gets a
 * `config` / `invalid_target` error before any I/O.
 */
export type ConnectOptions = (HttpTarget | StdioTarget) & ConnectSettings;

/** Everything in ConnectOptions but the target: version policy, budgets, ceilings, handlers, recovery, diagnostics. */
export interface ConnectSettings {
  /** Exact pin: only this version is accepted. Not with `maxProtocolVersion`. */
  protocolVersion?: string;
  /** Ceiling: never send or accept a newer version; negotiate the highest mutually supported one below. */
  maxProtocolVersion?: string;

  /** Baseline time budget for both phases, in ms (default 30000, max 3600000). */
  timeoutMs?: number;
  /** Baseline byte ceiling per response for both phases (default 16 MiB, max 1 GiB). */
  maxResponseBytes?: number;
  /** Ceiling for one unsolicited frame: notifications, server requests (default 1 MiB, max 64 MiB). */
  maxFrameBytes?: number;
  /** Establishment and tool listing. */
  discovery?: PhaseBudget;
  /** `tools/call` and the other operations of an established client. */
  call?: PhaseBudget;
  /** Sub-limit of the discovery deadline for a silent stdio probe, in ms (default 2000, max 600000). */
  probeTimeoutMs?: number;
  /** Sub-limit of the discovery deadline for one attempt's handshake, in ms (default 15000). */
  handshakeTimeoutMs?: number;
  /** Most tools accepted over all pages (default 10000, max 1000000). */
  maxTools?: number;
  /** Most pages followed for one list (default 100, max 10000). */
  maxListPages?: number;
  /** Ceiling for one tool's serialised input schema, in bytes (default 256 KiB, max 16 MiB). */
  maxToolSchemaBytes?: number;
  /** Requests in flight at once on one client; more wait for a slot within their own budget (default 64, max 10000). */
  maxInFlight?: number;
  /** Most `input_required` rounds for one request (default 8, max 100). */
  maxInputRounds?: number;

  /** Answers to server requests (elicitation, sampling, roots); each one given is declared as a capability. */
  handlers?: ClientHandlers;
  /**
   * Checks a tool result's `structuredContent` against the tool's `outputSchema`: a function
   * `(schema, value) => { valid, errors? }` to use your own validator, or `false` to check nothing.
   * Default: @cfworker/json-schema (drafts 4, 7, 2019-09 and 2020-12; 2020-12 when the schema
   * names no `$schema`), loaded on first use. A mismatch fails the call with
   * `protocol`/`output_schema_mismatch` and effect `done`.
   */
  validateOutput?: OutputValidator | false;
  /** Opt-in: fresh attempts after an eligible establishment failure (default: one attempt). */
  recovery?: RecoveryPolicy;
  /** Opt-in: wait out a 429/503 that names Retry-After during establishment, within the deadline. */
  transientRetry?: TransientRetryPolicy;
  /** HTTP only: open the optional server-to-client GET stream on legacy Streamable HTTP (default true). */
  listen?: boolean;
  /** List the tools inside the establishment deadline (the CLI's `tools` does). */
  prefetchTools?: boolean;
  /** Cancels establishment; linked into every wait. Never aborted by us. */
  signal?: AbortSignal;
  /**
   * OpenTelemetry spans and the client duration metric, as the semantic conventions for MCP name
   * them: a span for the establishment with its attempts and stages, one per request (its trace
   * context sent in `params._meta`), never a payload, argument or secret. Needs the optional
   * peer `@opentelemetry/api`, loaded only when this is set; `true` uses the globally registered
   * providers. Default off: nothing is loaded and a request costs nothing more.
   */
  tracing?: boolean | TracingOptions;
  /** Payload-free lifecycle events. A listener that throws cannot break the connection. */
  onEvent?: (event: LifecycleEvent) => void;
  /**
   * Where the era found for each server is remembered, so later connections skip a probe that
   * would only confirm it (default: in memory for this process; `false`: never remembered).
   */
  eraHints?: EraHintStore | false;
  /**
   * Client extensions to declare (SEP-2133): extension id (`vendor-prefix/name`, e.g.
   * `io.modelcontextprotocol/ui`) to its settings object (`{}` when it has none). Sent as
   * `capabilities.extensions` in `initialize` (2024-11-05 to 2025-11-25) and in every request's
   * client capabilities (2026-07-28), so servers offer what depends on them. What the server
   * declared is `client.serverExtensions`.
   */
  extensions?: Readonly<Record<string, JsonObject>>;
  /** Sent to the server as our identity. */
  clientInfo?: { name: string; version: string };
  /**
   * Further values to treat as secrets, beyond those the options already hold (header values,
   * URL credentials, `env` values, OAuth material): a key passed in `args`, a value a config file
   * expanded. Like those, they are redacted from every error and event, and `client.redact()`
   * removes them from what the server returns.
   */
  secrets?: readonly string[];
  deps?: Deps;
}
