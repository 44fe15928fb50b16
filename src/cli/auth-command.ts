import { createPrivateKey, type JsonWebKey } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { configDir, FileTokenStore, serverKey } from "../auth/token-store.ts";
import { connect } from "../connect/connect.ts";
import { configError } from "../errors/failures.ts";
import type { AuthOptions, ConnectOptions } from "../options/options.ts";
import type { TokenStore } from "../options/token-store.ts";
import { OAUTH_FLAGS, type Values } from "./flag-table.ts";
import type { Io } from "./io.ts";
import { openUrl } from "./open-url.ts";

const GRANTS = ["authorization_code", "client_credentials", "jwt_bearer", "token_exchange"] as const;

/** An assertion file holds one JWT: anything larger is not one. */
const MAX_ASSERTION_FILE_BYTES = 64 * 1024;

/** `tether auth login` waits this long for the user by default (the discovery budget, unless set). */
export const LOGIN_TIMEOUT_MS = 300_000;

/** A private key for private_key_jwt: a JWK (JSON) or a PKCS#8 PEM file. */
function keyFile(path: string): JsonWebKey {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw configError("unreadable_file", "--client-key-file could not be read", cause);
  }
  try {
    return text.trimStart().startsWith("{")
      ? (JSON.parse(text) as JsonWebKey)
      : createPrivateKey(text).export({ format: "jwk" });
  } catch {
    throw configError("invalid_option", "--client-key-file must hold a private JWK or a PKCS#8 PEM key");
  }
}

/** A secret named by an environment variable (never a value on the command line). */
function fromEnv(io: Io, flag: string, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const value = io.env[name];
  if (!value) throw configError("unset_variable", `--${flag} names ${name}, which is not set`);
  return value;
}

/** The assertion of --assertion-file: a regular file of bounded size, trimmed. */
function assertionFile(path: string): string {
  let text: string;
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > MAX_ASSERTION_FILE_BYTES)
      throw configError(
        "invalid_option",
        `--assertion-file must be a regular file of at most ${MAX_ASSERTION_FILE_BYTES} bytes`,
      );
    text = readFileSync(path, "utf8").trim();
  } catch (cause) {
    if (cause instanceof Error && cause.name === "TetherError") throw cause;
    throw configError("unreadable_file", "--assertion-file could not be read", cause);
  }
  if (text === "") throw configError("invalid_option", "--assertion-file is empty");
  return text;
}

/**
 * Where the user is sent to sign in: the URL on stderr, and a browser when stderr is a terminal
 * (or always, for a caller such as the bridge whose user is never at its terminal).
 */
export function openInBrowser(io: Io, who = "tether", withoutTerminal = false): (url: string) => void {
  return (url) => {
    io.stderr(`To authorize ${who}, open this URL in a browser:\n  ${url}\n`);
    if ((!io.stderrIsTty && !withoutTerminal) || io.env.TETHER_NO_BROWSER) return;
    openUrl(url);
  };
}

/**
 * The `auth` options for an HTTP target. Off with `--no-oauth`, or when the request already
 * carries an Authorization header (`--bearer-env`, `-H`, a config entry). Interactive sign-in
 * only where a person can answer (stdout and stderr are terminals) or for client credentials;
 * otherwise stored tokens only, so a script never waits for a browser. Returns the secrets it
 * read for the CLI's own redactor.
 */
export function authOptions(
  v: Values,
  io: Io,
  hasAuthorization: boolean,
): { auth: AuthOptions | undefined; secrets: string[] } {
  const oauthFlags = OAUTH_FLAGS.filter((f) => v[f] !== undefined);
  if (v["no-oauth"] && oauthFlags.length > 0)
    throw configError("conflicting_options", `--no-oauth cannot be combined with --${oauthFlags[0]}`);
  if (hasAuthorization && oauthFlags.length > 0)
    throw configError(
      "conflicting_options",
      `an Authorization header (--bearer-env, -H or the config file) cannot be combined with --${oauthFlags[0]}`,
    );
  if (v["no-oauth"] || hasAuthorization) return { auth: undefined, secrets: [] };
  const grant = (v.grant ?? "authorization_code") as (typeof GRANTS)[number];
  if (!GRANTS.includes(grant))
    throw configError("invalid_option", `--grant must be one of ${GRANTS.join(", ")}`);
  const clientSecret = fromEnv(io, "client-secret-env", v["client-secret-env"]);
  const privateKeyJwk = v["client-key-file"] ? keyFile(v["client-key-file"]) : undefined;
  if (v["assertion-file"] !== undefined && v["assertion-env"] !== undefined)
    throw configError("conflicting_options", "--assertion-file cannot be combined with --assertion-env");
  const assertion =
    v["assertion-file"] !== undefined
      ? assertionFile(v["assertion-file"])
      : fromEnv(io, "assertion-env", v["assertion-env"]);
  const idpSecret = fromEnv(io, "idp-client-secret-env", v["idp-client-secret-env"]);
  const idpFlag = (["idp-client-id", "idp-client-secret-env"] as const).find((f) => v[f] !== undefined);
  if (idpFlag && v["idp-token-endpoint"] === undefined)
    throw configError("invalid_option", `--${idpFlag} needs --idp-token-endpoint`);
  const applicationType = v["application-type"];
  if (applicationType !== undefined && applicationType !== "native" && applicationType !== "web")
    throw configError("invalid_option", "--application-type must be native or web");
  const person = io.isTty && io.stderrIsTty === true;
  // Only the authorization code grant needs a person; the others run unattended.
  const mode = v["stored-auth-only"]
    ? "stored-only"
    : grant !== "authorization_code" || person
      ? "interactive"
      : "stored-only";
  const auth: AuthOptions = {
    mode,
    grant,
    clientId: v["client-id"],
    clientSecret,
    privateKeyJwk,
    scope: v.scope,
    openUrl: openInBrowser(io),
    tokenStore: new FileTokenStore(configDir(io.env)),
  };
  if (assertion !== undefined) auth.assertion = assertion;
  if (v["idp-token-endpoint"] !== undefined)
    auth.identityProvider = {
      tokenEndpoint: v["idp-token-endpoint"],
      ...(v["idp-client-id"] !== undefined ? { clientId: v["idp-client-id"] } : {}),
      ...(idpSecret !== undefined ? { clientSecret: idpSecret } : {}),
    };
  if (v.dpop) auth.dpop = true;
  if (applicationType) auth.applicationType = applicationType;
  const secrets = [
    ...(clientSecret ? [clientSecret] : []),
    ...(privateKeyJwk && typeof privateKeyJwk.d === "string" ? [privateKeyJwk.d] : []),
    ...(assertion ? [assertion] : []),
    ...(idpSecret ? [idpSecret] : []),
  ];
  return { auth, secrets };
}

interface StatusRow {
  server: string;
  stored: boolean;
  issuer?: string;
  resource?: string;
  scopes?: string[];
  expiresAt?: string;
  expired?: boolean;
  refreshable?: boolean;
  /** `DPoP` when the token is bound to the stored key. */
  tokenType?: string;
}

/** What is stored for a server: never the tokens themselves. */
async function statusOf(url: URL, store: TokenStore): Promise<StatusRow> {
  const server = `${url.origin}${url.pathname}`;
  const record = await store.get(serverKey(url));
  if (record?.kind !== "tokens") return { server, stored: false };
  const row: StatusRow = {
    server,
    stored: true,
    issuer: record.issuer,
    resource: record.resource,
    scopes: record.scope ? record.scope.split(" ") : [],
    refreshable: record.refreshToken !== undefined,
    tokenType: record.tokenType ?? "Bearer",
  };
  if (record.expiresAt !== undefined) {
    row.expiresAt = new Date(record.expiresAt).toISOString();
    row.expired = Date.now() >= record.expiresAt;
  }
  return row;
}

function render(row: StatusRow & { removed?: boolean; note?: string }, json: boolean): string {
  if (json) return `${JSON.stringify(row)}\n`;
  const lines: [string, string][] = [["server", row.server]];
  if (row.removed !== undefined) lines.push(["signed out", row.removed ? "yes" : "nothing was stored"]);
  else lines.push(["stored", row.stored ? "yes" : "no"]);
  if (row.issuer) lines.push(["issuer", row.issuer]);
  if (row.scopes) lines.push(["scopes", row.scopes.join(" ") || "(none named)"]);
  if (row.expiresAt) lines.push(["expires", `${row.expiresAt}${row.expired ? " (expired)" : ""}`]);
  if (row.refreshable !== undefined) lines.push(["refreshable", row.refreshable ? "yes" : "no"]);
  if (row.tokenType) lines.push(["token type", row.tokenType]);
  if (row.note) lines.push(["note", row.note]);
  const width = Math.max(...lines.map(([k]) => k.length));
  return `${lines.map(([k, val]) => `${k.padEnd(width)}  ${val}`).join("\n")}\n`;
}

/** A store that remembers whether a write failed, so `login` can say its token was not kept. */
function tracking(store: TokenStore): { store: TokenStore; failed: () => boolean } {
  let failed = false;
  return {
    failed: () => failed,
    store: {
      get: (key) => store.get(key),
      delete: (key) => store.delete(key),
      async set(key, record) {
        try {
          await store.set(key, record);
        } catch (error) {
          failed = true;
          throw error;
        }
      },
    },
  };
}

/**
 * `tether auth login|logout|status <target>`. `login` forgets the stored token, connects with
 * interactive authorization (its wait bounded by the discovery budget, 300 s unless set) and
 * reports what was stored; `logout` forgets it; `status` shows it. No token is ever printed.
 */
export async function runAuth(
  sub: string | undefined,
  build: () => Promise<{ options: ConnectOptions; secrets: string[] }>,
  io: Io,
  json: boolean,
): Promise<number> {
  if (sub !== "login" && sub !== "logout" && sub !== "status")
    throw configError("invalid_args", "auth takes login, logout or status, then a target");
  const { options } = await build();
  if (options.url === undefined)
    throw configError(
      "invalid_target",
      "auth works with HTTP servers: give a URL or a configured HTTP server",
    );
  const url = new URL(String(options.url));
  const store = new FileTokenStore(configDir(io.env));
  if (sub === "status") {
    io.stdout(render(await statusOf(url, store), json));
    return 0;
  }
  const before = await store.get(serverKey(url));
  await store.delete(serverKey(url));
  if (sub === "logout") {
    io.stdout(render({ server: `${url.origin}${url.pathname}`, stored: false, removed: !!before }, json));
    return 0;
  }
  if (!options.auth)
    throw configError(
      "invalid_option",
      "auth login needs OAuth: drop --no-oauth and any Authorization header",
    );
  const saved = tracking(store);
  const budget = options.discovery?.timeoutMs ?? options.timeoutMs ?? LOGIN_TIMEOUT_MS;
  const client = await connect({
    ...options,
    auth: { ...options.auth, mode: "interactive" as const, tokenStore: saved.store },
    discovery: { ...options.discovery, timeoutMs: budget },
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? budget,
  });
  await client.close();
  if (saved.failed())
    throw configError("store_failed", "signed in, but the token could not be saved in the config folder");
  const row = await statusOf(url, store);
  io.stdout(render(row.stored ? row : { ...row, note: "the server did not ask for authorization" }, json));
  return 0;
}
