/**
 * The flags of one command line as `ConnectOptions`: the target (a URL, a configured server's name,
 * or the stdio command after --), budgets and ceilings, headers and environment, OAuth, and the
 * secrets all of them carry, which the CLI's redactor learns before anything is printed.
 */
import { configError } from "../errors/failures.ts";
import { type Redactor, secretsOf } from "../errors/redact.ts";
import type { LimitName } from "../options/limits.ts";
import { limit } from "../options/limits.ts";
import type { ConnectOptions, ConnectSettings } from "../options/options.ts";
import type { AuthRecord, TokenStore } from "../options/token-store.ts";
import { hasUrlCredentials, urlCredentialSecrets } from "../options/url-credentials.ts";
import type { Invocation } from "./argv.ts";
import { type ConfigEnvironment, configEnvironment, findServer } from "./config.ts";
import { cliElicitation } from "./elicit.ts";
import { afresh, cacheDir, FileEraHints } from "./era-hint-file.ts";
import type { Values } from "./flag-table.ts";
import type { Io } from "./io.ts";
import { checkSessionFlags, isSessionTarget } from "./session-target.ts";

/** A numeric flag: digits only, then the library's own rule for the limit (P2), named by the flag. */
export function numberFlag(values: Values, flag: keyof Values, which: LimitName): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^\d+$/.test(raw.trim())) {
    throw configError("invalid_limit", `--${String(flag)} must be a positive whole number`);
  }
  return limit(`--${String(flag)}`, Number(raw.trim()), which);
}

function headerFlags(values: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const i = h.indexOf(":");
    if (i <= 0) throw configError("invalid_header", "a header is given as 'Name: value'");
    out[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return out;
}

function envFlags(values: Values): Record<string, string> | undefined {
  if (!values.env?.length) return undefined;
  const out: Record<string, string> = {};
  for (const kv of values.env) {
    const i = kv.indexOf("=");
    if (i <= 0) throw configError("invalid_env", "an environment variable is given as KEY=VALUE");
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/**
 * Builds connect options from the target (URL, config name, or the stdio command after --) and the
 * flags. Asynchronous only because OAuth's option building loads when an HTTP target needs it.
 */
export async function connectOptions(
  inv: Invocation,
  target: string | undefined,
  io: Io,
): Promise<{ options: ConnectOptions; secrets: string[] }> {
  const v = inv.values;
  // A session's connection was settled when it started: only budgets and ceilings apply to @NAME.
  if (isSessionTarget(target)) checkSessionFlags(v);
  const headers = headerFlags(v);
  const env = envFlags(v);
  if (v["bearer-env"] !== undefined) {
    const token = io.env[v["bearer-env"]];
    if (!token)
      throw configError("unset_variable", `--bearer-env names ${v["bearer-env"]}, which is not set`);
    headers.authorization = `Bearer ${token}`;
  }
  const transport = v.transport ?? "auto";
  if (!["auto", "streamable-http", "sse"].includes(transport)) {
    throw configError("invalid_option", "--transport must be auto, streamable-http or sse");
  }
  if (v["protocol-version"] !== undefined && v["max-protocol-version"] !== undefined) {
    throw configError(
      "conflicting_options",
      "--protocol-version (a pin) cannot be combined with --max-protocol-version (a ceiling)",
    );
  }
  const discoveryTimeout =
    numberFlag(v, "discovery-timeout", "timeoutMs") ?? numberFlag(v, "connect-timeout", "timeoutMs");
  const options: ConnectSettings = {
    protocolVersion: v["protocol-version"],
    maxProtocolVersion: v["max-protocol-version"],
    timeoutMs: numberFlag(v, "timeout", "timeoutMs"),
    maxResponseBytes: numberFlag(v, "max-bytes", "maxResponseBytes"),
    maxFrameBytes: numberFlag(v, "max-frame-bytes", "maxFrameBytes"),
    probeTimeoutMs: numberFlag(v, "probe-timeout", "probeTimeoutMs"),
    handshakeTimeoutMs: numberFlag(v, "handshake-timeout", "handshakeTimeoutMs"),
    discovery: {
      timeoutMs: discoveryTimeout,
      maxResponseBytes: numberFlag(v, "discovery-max-bytes", "maxResponseBytes"),
    },
    call: {
      timeoutMs: numberFlag(v, "call-timeout", "timeoutMs"),
      maxResponseBytes: numberFlag(v, "call-max-bytes", "maxResponseBytes"),
    },
    // A person at a terminal answers a server's questions; elsewhere each is declined.
    // URL mode is declared too: opened on a terminal when the person agrees, declined elsewhere.
    handlers: {
      elicitation: cliElicitation(io.askAsync && !v.json ? io.askAsync : undefined, io.stderr, io.env),
      elicitationModes: ["form", "url"],
    },
    // A one-shot command has no use for the optional server-to-client stream.
    listen: false,
    // `probe` reports the server as it is now, and `--fresh` asks the same of any command.
    eraHints:
      v.fresh || inv.command === "probe"
        ? afresh(new FileEraHints(cacheDir(io.env)))
        : new FileEraHints(cacheDir(io.env)),
  };
  if (v.retry !== undefined) {
    if (!/^\d+$/.test(v.retry) || Number(v.retry) < 1 || Number(v.retry) > 10) {
      throw configError("invalid_limit", "--retry must be a whole number from 1 to 10");
    }
    options.recovery = { maxAttempts: Number(v.retry) };
  }
  const serverStderr = v["server-stderr"] ? "inherit" : "ignore";
  const secrets = [...Object.values(headers), ...Object.values(env ?? {})];
  if (isSessionTarget(target)) return { options: options as ConnectOptions, secrets };
  if (inv.stdio) {
    const [command, ...args] = inv.stdio;
    return { options: { ...options, command: present(command), args, env, serverStderr }, secrets };
  }
  if (!target)
    throw configError(
      "invalid_target",
      "give a target: a URL, a configured server's name, or -- and a command",
    );
  // URL userinfo is sent as Basic credentials: like an Authorization header, it stands instead of OAuth.
  // OAuth applies only to HTTP targets: its option building and token store load with the first one.
  const withAuth = async (h: Record<string, string>, url?: string) => {
    const { authOptions } = await import("./auth-command.ts");
    const { auth, secrets: read } = authOptions(
      v,
      io,
      Object.keys(h).some((k) => k.toLowerCase() === "authorization") ||
        (url !== undefined && hasUrlCredentials(url)),
    );
    secrets.push(...read);
    return auth;
  };
  if (/^https?:\/\//i.test(target)) {
    secrets.push(...urlCredentialSecrets(target));
    return {
      options: {
        ...options,
        url: target,
        headers,
        transport: transport as ConnectOptions["transport"],
        auth: await withAuth(headers, target),
      },
      secrets,
    };
  }
  // The one bounded config loader decides which definition the name means (CONTRACT S3).
  const entry = findServer(target, v.config, configWhere(io));
  secrets.push(...entry.secrets);
  if (entry.transport === "stdio") {
    return {
      options: {
        ...options,
        command: present(entry.command),
        args: entry.args,
        env: { ...entry.env, ...env },
        cwd: entry.cwd,
        serverStderr,
      },
      secrets,
    };
  }
  return {
    options: {
      ...options,
      url: present(entry.url),
      headers: { ...entry.headers, ...headers },
      auth: await withAuth({ ...entry.headers, ...headers }, entry.url),
      transport: v.transport
        ? (transport as ConnectOptions["transport"])
        : entry.transport === "sse"
          ? "sse"
          : "auto",
    },
    secrets,
  };
}

/** Where config files are and what their references mean, with `${input:ID}` asked on a terminal. */
function configWhere(io: Io): ConfigEnvironment {
  const ask = io.askLine;
  return {
    ...configEnvironment(io.env),
    input: ask ? (id: string, where: string) => ask(`${where} asks for ${id}: `) : undefined,
  };
}

/**
 * The command or URL of a target. The argv and config parsers never hand on a target without one;
 * should one slip through, it is the error connect() itself gives for a missing target.
 */
function present(value: string | undefined): string {
  if (value === undefined)
    throw configError(
      "invalid_target",
      "give exactly one of url (an HTTP server) and command (a stdio server)",
    );
  return value;
}

/**
 * Teaches the CLI's redactor every secret in options just built: what `connectOptions` reported
 * (header and env values, client secrets) and what the options themselves hold (the bare token
 * after an auth scheme, URL userinfo and query values, env values). The token store is wrapped so
 * that OAuth tokens read or written during the run are learned too. Returns the options to use.
 */
export function learnSecrets(options: ConnectOptions, secrets: string[], redactor: Redactor): ConnectOptions {
  let url: URL | undefined;
  try {
    url = options.url === undefined ? undefined : new URL(String(options.url));
  } catch {
    url = undefined;
  }
  redactor.learn([...secrets, ...secretsOf(url, options.headers), ...Object.values(options.env ?? {})]);
  const store = options.auth?.tokenStore;
  if (!options.auth || !store) return options;
  return { ...options, auth: { ...options.auth, tokenStore: learningStore(store, redactor) } };
}

/** A token store that teaches the redactor every token it hands out or keeps. */
function learningStore(store: TokenStore, redactor: Redactor): TokenStore {
  const learn = (record: AuthRecord | undefined) => {
    if (record?.kind === "tokens") redactor.learn([record.accessToken, record.refreshToken ?? ""]);
    else if (record?.kind === "client" && record.clientSecret) redactor.learn([record.clientSecret]);
    return record;
  };
  return {
    get: async (key) => learn(await store.get(key)),
    set: (key, record) => {
      learn(record);
      return store.set(key, record);
    },
    delete: (key) => store.delete(key),
  };
}
