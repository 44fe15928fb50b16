import { spawn } from "node:child_process";
import { configError } from "../errors/failures.ts";
import { secretsOf } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type Clock, realClock } from "../lifecycle/clock.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { type EraHintStore, processEraHints } from "../protocol/era-hints.ts";
import { type Extensions, extensionsProblem, withExtensions } from "../protocol/extensions.ts";
import type { VersionPolicy } from "../protocol/version-policy.ts";
import {
  isKnownVersion,
  KNOWN_VERSIONS,
  LATEST_VERSION,
  type ProtocolVersion,
} from "../protocol/versions.ts";
import type { FetchFn, SpawnFn } from "./deps.ts";
import { type ClientHandlers, capabilitiesOf } from "./handlers.ts";
import { limit } from "./limits.ts";
import type { ConnectOptions, TracingOptions } from "./options.ts";
import type { RecoveryPolicy } from "./recovery-policy.ts";
import { type ResolvedAuth, resolveAuth } from "./resolve-auth.ts";
import { hasUrlCredentials } from "./url-credentials.ts";

export interface ResolvedBudget {
  timeoutMs: number;
  maxResponseBytes: number;
}

export type ResolvedTarget =
  | {
      kind: "http";
      url: URL;
      headers: Record<string, string>;
      transport: "auto" | "streamable-http" | "sse";
    }
  | {
      kind: "stdio";
      command: string;
      args: readonly string[];
      env: Record<string, string> | undefined;
      cwd: string | undefined;
      stderr: "ignore" | "inherit";
      inheritEnv: "safe" | "all";
    };

/**
 * Options after validation: internals take only this. Plain data: whoever needs an object built
 * from it (the redactor, the event sink, the authorizer) builds it (src/connect/runtime.ts).
 */
export interface ResolvedOptions {
  target: ResolvedTarget;
  policy: VersionPolicy;
  discovery: ResolvedBudget;
  call: ResolvedBudget;
  maxFrameBytes: number;
  probeTimeoutMs: number;
  handshakeTimeoutMs: number;
  maxTools: number;
  maxListPages: number;
  maxToolSchemaBytes: number;
  maxInputRounds: number;
  maxInFlight: number;
  listen: boolean;
  prefetchTools: boolean;
  clientInfo: { name: string; version: string };
  eraHints: EraHintStore | undefined;
  handlers: ClientHandlers | undefined;
  /**
   * The client capabilities the handlers and the declared extensions amount to, sent on every
   * handshake and modern request.
   */
  capabilities: JsonObject;
  /** The extensions the caller declared (SEP-2133), validated. */
  extensions: Extensions;
  recovery: Required<Pick<RecoveryPolicy, "maxAttempts" | "backoffMs">> &
    Pick<RecoveryPolicy, "shouldRetry" | "isSecurityError">;
  transientRetries: number;
  /** OAuth for an HTTP server, when configured (validated; the authorizer is built by connect()). */
  auth: ResolvedAuth | undefined;
  /** Every secret the options hold (header values, URL credentials, env values, client secrets), for the redactor. */
  secrets: readonly string[];
  /** OpenTelemetry, when asked for (`tracing: true` is `{}`: the global providers). */
  tracing: TracingOptions | undefined;
  /** The caller's event listener, if any. */
  onEvent: ((event: LifecycleEvent) => void) | undefined;
  /**
   * The caller's own fetch (`deps.fetch`), for every HTTP request; without one, OAuth uses the
   * platform's and the MCP transports the built-in client of transport/node-http.ts on Node.
   */
  fetch: FetchFn | undefined;
  spawn: SpawnFn;
  clock: Clock;
}

export const CLIENT_INFO = { name: "tether", version: "0.1.0" };

function small(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw configError("invalid_limit", `${name} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function recovery(r: RecoveryPolicy | undefined): ResolvedOptions["recovery"] {
  if (r === undefined) return { maxAttempts: 1, backoffMs: 100 };
  if (typeof r !== "object" || r === null) throw configError("invalid_option", "recovery must be an object");
  for (const hook of ["shouldRetry", "isSecurityError"] as const) {
    if (r[hook] !== undefined && typeof r[hook] !== "function")
      throw configError("invalid_option", `recovery.${hook} must be a function`);
  }
  return {
    maxAttempts: small("recovery.maxAttempts", r.maxAttempts, 1, 10),
    backoffMs: r.backoffMs === undefined ? 100 : small("recovery.backoffMs", r.backoffMs, 1, 10_000),
    shouldRetry: r.shouldRetry,
    isSecurityError: r.isSecurityError,
  };
}

function handlers(h: ClientHandlers | undefined): ClientHandlers | undefined {
  if (h === undefined) return undefined;
  if (typeof h !== "object" || h === null) throw configError("invalid_option", "handlers must be an object");
  for (const k of ["elicitation", "sampling", "roots"] as const) {
    if (h[k] !== undefined && typeof h[k] !== "function")
      throw configError("invalid_option", `handlers.${k} must be a function`);
  }
  const modes = h.elicitationModes;
  if (
    modes !== undefined &&
    (!Array.isArray(modes) || modes.length === 0 || modes.some((m) => m !== "form" && m !== "url"))
  )
    throw configError("invalid_option", 'handlers.elicitationModes must list "form" and/or "url"');
  return h;
}

function version(name: string, value: unknown): ProtocolVersion {
  if (!isKnownVersion(value)) {
    throw configError("unknown_version", `${name} must be one of ${KNOWN_VERSIONS.join(", ")}`);
  }
  return value;
}

function stringRecord(name: string, value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw configError("invalid_option", `${name} must be an object of strings`);
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw configError("invalid_option", `${name}.${k} must be a string`);
  }
  return value as Record<string, string>;
}

function budget(
  name: "discovery" | "call",
  phase: ConnectOptions["discovery"],
  base: ResolvedBudget,
): ResolvedBudget {
  if (phase === undefined) return base;
  if (typeof phase !== "object" || phase === null)
    throw configError("invalid_option", `${name} must be an object`);
  return {
    timeoutMs:
      phase.timeoutMs === undefined
        ? base.timeoutMs
        : limit(`${name}.timeoutMs`, phase.timeoutMs, "timeoutMs"),
    maxResponseBytes:
      phase.maxResponseBytes === undefined
        ? base.maxResponseBytes
        : limit(`${name}.maxResponseBytes`, phase.maxResponseBytes, "maxResponseBytes"),
  };
}

/**
 * URL userinfo as `Authorization: Basic` (RFC 7617, UTF-8), the way curl sends it, and the URL
 * stripped of it: fetch refuses URLs with credentials, and the URL is never where a secret
 * travels. An explicit Authorization header as well is ambiguous, so it is refused by name.
 */
function basicFromUserinfo(url: URL, headers: Record<string, string>): string | undefined {
  if (url.username === "" && url.password === "") return undefined;
  if (Object.keys(headers).some((h) => h.toLowerCase() === "authorization"))
    throw configError(
      "conflicting_options",
      "URL credentials (user:password@) cannot be combined with an Authorization header; give one of them",
    );
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    throw configError("invalid_target", "url credentials (user:password@) are not valid percent-encoding");
  }
  if (user.includes(":"))
    throw configError("invalid_target", "url credentials: the user name cannot contain a colon (RFC 7617)");
  url.username = "";
  url.password = "";
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

function target(o: ConnectOptions): ResolvedTarget {
  if ((o.url === undefined) === (o.command === undefined)) {
    throw configError(
      "invalid_target",
      "give exactly one of url (an HTTP server) and command (a stdio server)",
    );
  }
  if (o.url !== undefined) {
    let url: URL;
    try {
      url = new URL(String(o.url));
    } catch {
      throw configError("invalid_target", "url is not a valid URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw configError("invalid_target", "url must use http or https");
    }
    const transport = o.transport ?? "auto";
    if (!["auto", "streamable-http", "sse"].includes(transport)) {
      throw configError("invalid_option", "transport must be auto, streamable-http or sse");
    }
    const headers = { ...stringRecord("headers", o.headers) };
    const basic = basicFromUserinfo(url, headers);
    if (basic) headers.authorization = basic;
    return { kind: "http", url, headers, transport };
  }
  if (typeof o.command !== "string" || o.command.trim() === "") {
    throw configError("invalid_target", "command must be a non-empty string");
  }
  if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== "string"))) {
    throw configError("invalid_option", "args must be an array of strings");
  }
  const stderr = o.serverStderr ?? "ignore";
  const inheritEnv = o.inheritEnv ?? "safe";
  if (inheritEnv !== "safe" && inheritEnv !== "all")
    throw configError("invalid_option", "inheritEnv must be safe or all");
  if (stderr !== "ignore" && stderr !== "inherit")
    throw configError("invalid_option", "serverStderr must be ignore or inherit");
  return {
    kind: "stdio",
    command: o.command,
    args: o.args ?? [],
    env: stringRecord("env", o.env),
    cwd: o.cwd,
    stderr,
    inheritEnv,
  };
}

function policy(o: ConnectOptions): VersionPolicy {
  if (o.protocolVersion !== undefined && o.maxProtocolVersion !== undefined) {
    throw configError(
      "conflicting_options",
      "protocolVersion (a pin) and maxProtocolVersion (a ceiling) cannot be combined",
    );
  }
  if (o.protocolVersion !== undefined) {
    const v = version("protocolVersion", o.protocolVersion);
    return { mode: "pin", version: v, ceiling: v };
  }
  if (o.maxProtocolVersion !== undefined)
    return { mode: "ceiling", ceiling: version("maxProtocolVersion", o.maxProtocolVersion) };
  return { mode: "auto", ceiling: LATEST_VERSION };
}

/** Most extra secrets one connection takes, and the longest one (characters). */
const MAX_EXTRA_SECRETS = 1_000;
const MAX_SECRET_CHARS = 64 * 1024;

function extraSecrets(value: unknown): string[] {
  if (value === undefined) return [];
  if (
    !Array.isArray(value) ||
    value.length > MAX_EXTRA_SECRETS ||
    value.some((s) => typeof s !== "string" || s.length > MAX_SECRET_CHARS)
  )
    throw configError(
      "invalid_option",
      `secrets must be a list of at most ${MAX_EXTRA_SECRETS} strings of at most ${MAX_SECRET_CHARS} characters`,
    );
  return value as string[];
}

/** `tracing`: off, the global providers, or the caller's; anything else is a config error. */
function tracing(value: unknown): TracingOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  const provider = (v: unknown, method: string) =>
    v === undefined ||
    (typeof v === "object" && v !== null && typeof (v as Record<string, unknown>)[method] === "function");
  if (
    typeof value === "object" &&
    value !== null &&
    provider((value as TracingOptions).tracerProvider, "getTracer") &&
    provider((value as TracingOptions).meterProvider, "getMeter")
  )
    return { ...(value as TracingOptions) };
  throw configError(
    "invalid_option",
    "tracing must be true, false or { tracerProvider?, meterProvider? } (OpenTelemetry providers)",
  );
}

/** Normalises and validates options once, before any I/O. Throws a `config` TetherError. */
export function resolveOptions(o: ConnectOptions): ResolvedOptions {
  if (typeof o !== "object" || o === null) throw configError("invalid_option", "options must be an object");
  const base: ResolvedBudget = {
    timeoutMs: limit("timeoutMs", o.timeoutMs, "timeoutMs"),
    maxResponseBytes: limit("maxResponseBytes", o.maxResponseBytes, "maxResponseBytes"),
  };
  const t = target(o);
  const secrets = [
    ...(t.kind === "http" ? secretsOf(new URL(String(o.url)), t.headers) : []),
    ...(t.kind === "stdio" && t.env ? Object.values(t.env) : []),
    ...extraSecrets(o.secrets),
  ];
  const clientInfo = o.clientInfo ?? CLIENT_INFO;
  const extensionProblem = extensionsProblem(o.extensions);
  if (extensionProblem) throw configError("invalid_option", extensionProblem);
  const extensions: Extensions = o.extensions ? structuredClone(o.extensions) : {};
  const auth = resolveAuth(
    o.auth,
    { ...t, urlCredentials: o.url !== undefined && hasUrlCredentials(o.url) },
    clientInfo.name,
    secrets,
  );
  return {
    target: t,
    policy: policy(o),
    discovery: budget("discovery", o.discovery, base),
    call: budget("call", o.call, base),
    maxFrameBytes: limit("maxFrameBytes", o.maxFrameBytes, "maxFrameBytes"),
    probeTimeoutMs: limit("probeTimeoutMs", o.probeTimeoutMs, "probeTimeoutMs"),
    handshakeTimeoutMs: limit("handshakeTimeoutMs", o.handshakeTimeoutMs, "handshakeTimeoutMs"),
    maxTools: limit("maxTools", o.maxTools, "maxTools"),
    maxListPages: limit("maxListPages", o.maxListPages, "maxListPages"),
    maxToolSchemaBytes: limit("maxToolSchemaBytes", o.maxToolSchemaBytes, "maxToolSchemaBytes"),
    maxInputRounds: limit("maxInputRounds", o.maxInputRounds, "maxInputRounds"),
    maxInFlight: limit("maxInFlight", o.maxInFlight, "maxInFlight"),
    listen: o.listen ?? true,
    prefetchTools: o.prefetchTools ?? false,
    clientInfo,
    recovery: recovery(o.recovery),
    transientRetries:
      o.transientRetry === undefined
        ? 0
        : small("transientRetry.maxRetries", o.transientRetry?.maxRetries, 1, 10),
    handlers: handlers(o.handlers),
    capabilities: withExtensions(capabilitiesOf(o.handlers), extensions),
    extensions,
    eraHints: o.eraHints === false ? undefined : (o.eraHints ?? processEraHints),
    auth: t.kind === "http" ? auth : undefined,
    secrets,
    tracing: tracing(o.tracing),
    onEvent: o.onEvent,
    fetch: o.deps?.fetch,
    spawn: o.deps?.spawn ?? spawn,
    clock: o.deps?.clock ?? realClock,
  };
}
