/**
 * The one table of the CLI's options: the only list of flag names. The argument parser, the
 * `@NAME` refusals, the OAuth conflict checks, each command's help line, the completion scripts
 * and docs/cli.md's option table all read it. A new flag is one entry here, and the name of it in
 * the `flags` of each command (src/cli/commands/) that takes it. A leaf: parsing a command line
 * loads nothing more.
 *
 * The order is the completion scripts' order: the connection options, then the options of single
 * commands in the order of the command table, then those every command takes.
 */
import { LOGGING_LEVELS } from "../client/results.ts";

export interface FlagSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /**
   * Which commands take it: every command that connects (`connection`), every command that holds a
   * connection for an operation (`operation`), every command (`everywhere`); else the commands that
   * name it in their `flags`.
   */
  scope?: "connection" | "operation" | "everywhere";
  /** How to sign in with OAuth: none may be combined with `--no-oauth` or an Authorization header. */
  oauth?: true;
  /** Settled when a session starts: a command on `@NAME` may not give it. */
  fixed?: true;
  /** Another name for `alias` (documented in its row). */
  alias?: string;
  /** Its value's placeholder, as the docs show it. */
  value?: string;
  /** Its value as a command's help shows it, where that differs from `value`. */
  helpValue?: string;
  /** Added after the option in a command's help. */
  helpNote?: string;
  /** Its row in docs/cli.md's option table; a flag without one is documented elsewhere. */
  about?: string;
}

const S = "string";
const B = "boolean";

export const FLAGS = {
  transport: {
    type: S,
    scope: "connection",
    fixed: true,
    value: "auto|streamable-http|sse",
    about: "HTTP transport; `auto` (default) follows the spec's detection",
  },
  header: {
    type: S,
    short: "H",
    multiple: true,
    scope: "connection",
    fixed: true,
    value: "'Name: value'",
    about: "extra HTTP header, repeatable",
  },
  env: {
    type: S,
    short: "e",
    multiple: true,
    scope: "connection",
    fixed: true,
    value: "KEY=VALUE",
    about: "extra environment variable for a stdio server, repeatable",
  },
  "bearer-env": {
    type: S,
    scope: "connection",
    fixed: true,
    value: "VAR",
    about: "send `Authorization: Bearer $VAR` (keeps the token off the command line)",
  },
  "protocol-version": { type: S, scope: "connection", fixed: true, value: "V", about: "exact pin" },
  "max-protocol-version": {
    type: S,
    scope: "connection",
    fixed: true,
    value: "V",
    about: "ceiling; cannot be combined with `--protocol-version`",
  },
  timeout: { type: S, scope: "connection", value: "MS", about: "baseline time budget, both phases" },
  "discovery-timeout": {
    type: S,
    scope: "connection",
    value: "MS",
    about: "the whole establishment deadline, tool listing included",
  },
  "connect-timeout": { type: S, scope: "connection", alias: "discovery-timeout" },
  "call-timeout": { type: S, scope: "connection", value: "MS", about: "each call's deadline" },
  "probe-timeout": {
    type: S,
    scope: "connection",
    fixed: true,
    value: "MS",
    about: "a sub-limit inside the discovery deadline: the era probe (`server/discover`)",
  },
  "handshake-timeout": {
    type: S,
    scope: "connection",
    fixed: true,
    value: "MS",
    about: "a sub-limit inside the discovery deadline: the handshake",
  },
  "max-bytes": {
    type: S,
    scope: "connection",
    value: "N",
    about: "baseline byte ceiling per response, both phases",
  },
  "discovery-max-bytes": {
    type: S,
    scope: "connection",
    value: "N",
    about: "byte ceiling per response in the discovery phase",
  },
  "call-max-bytes": {
    type: S,
    scope: "connection",
    value: "N",
    about: "byte ceiling per response in the call phase",
  },
  "max-frame-bytes": {
    type: S,
    scope: "connection",
    fixed: true,
    value: "N",
    about: "ceiling for unsolicited frames",
  },
  retry: {
    type: S,
    scope: "connection",
    fixed: true,
    value: "N",
    about: "opt-in recovery: at most N attempts in all (default 1)",
  },
  json: { type: B, scope: "connection", about: "machine-readable stdout (one JSON document)" },
  events: {
    type: B,
    scope: "connection",
    about: "lifecycle events as JSON lines on stderr, before any error record",
  },
  "server-stderr": {
    type: B,
    scope: "connection",
    fixed: true,
    about: "pass a stdio server's stderr through to ours",
  },
  config: {
    type: S,
    scope: "connection",
    fixed: true,
    value: "FILE",
    about: "read server names from this file only (`.toml`: Codex's format, else JSON or JSONC)",
  },
  fresh: {
    type: B,
    scope: "connection",
    fixed: true,
    about: "ignore the remembered era and detect afresh, refreshing it (`probe` always does)",
  },
  "no-oauth": { type: B, scope: "connection", fixed: true, about: "never sign in with OAuth (see auth.md)" },
  "stored-auth-only": {
    type: B,
    scope: "connection",
    fixed: true,
    oauth: true,
    about: "OAuth with stored tokens only: never sign in (see auth.md)",
  },
  "client-id": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "ID",
    about: "a pre-registered OAuth client (see auth.md)",
  },
  "client-secret-env": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "VAR",
    about: "the pre-registered OAuth client's secret, from VAR (see auth.md)",
  },
  "client-key-file": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "FILE",
    about: "the pre-registered OAuth client's private key, instead of a secret (see auth.md)",
  },
  grant: {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "authorization_code|client_credentials|jwt_bearer|token_exchange",
    about: "the OAuth grant (default `authorization_code`; see auth.md)",
  },
  scope: {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "S",
    about: "the OAuth scopes to ask for, space-separated (see auth.md)",
  },
  "assertion-file": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "FILE",
    about:
      "the JWT that `jwt_bearer` presents, or the ID token that `token_exchange` exchanges; never on the command line",
  },
  "assertion-env": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "VAR",
    about: "the same, from an environment variable",
  },
  "idp-token-endpoint": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "URL",
    about: "the enterprise identity provider of `token_exchange`: its token endpoint",
  },
  "idp-client-id": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "ID",
    about: "the enterprise identity provider of `token_exchange`: our client there",
  },
  "idp-client-secret-env": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "VAR",
    about: "the enterprise identity provider of `token_exchange`: our client's secret, from VAR",
  },
  dpop: {
    type: B,
    scope: "connection",
    fixed: true,
    oauth: true,
    about: "DPoP-bound tokens: proofs signed by a key kept with the tokens",
  },
  "application-type": {
    type: S,
    scope: "connection",
    fixed: true,
    oauth: true,
    value: "native|web",
    about:
      "`application_type` of a dynamic client registration (default: `native` where the protocol version requires it)",
  },
  "log-level": {
    type: S,
    scope: "operation",
    value: "L",
    helpValue: LOGGING_LEVELS.join("|"),
    about:
      "send `logging/setLevel` after establishment (`debug` … `emergency`) and show the server's log messages at L and above on stderr (`watch`: on stdout, as its lines)",
  },
  "args-file": {
    type: S,
    value: "FILE",
    helpNote: "(- reads stdin)",
    about: "the arguments as a JSON object; `-` reads stdin",
  },
  output: {
    type: S,
    short: "o",
    value: "FILE",
    helpNote: "(- for stdout)",
    about:
      "write binary contents (images, audio, blobs) decoded to FILE (`-`: stdout); `types`: the declarations; `skill`: the folder to write the skill into",
  },
  task: {
    type: B,
    helpNote: "(run as a task where the server supports tasks)",
    about:
      "run the tool as a task where the server supports tasks: its status on a terminal, bounded polling, the result at the end; Ctrl-C cancels the task",
  },
  "progress-timeout": {
    type: S,
    value: "MS",
    helpNote: "(each progress notification restarts the call clock)",
    about:
      "each progress notification restarts the call clock; `--call-timeout` (default 10 × MS) bounds the whole call",
  },
  subscribe: {
    type: S,
    multiple: true,
    value: "URI",
    helpNote: "(repeatable)",
    about: "subscribe to a resource's updates, repeatable",
  },
  duration: { type: S, value: "MS", about: "end the watch after MS (else Ctrl-C ends it, exit 0)" },
  "idle-timeout": {
    type: S,
    value: "MS",
    about:
      "`session start`: end the session after this long without a command (default 1800000, 30 minutes); `bridge` with `--listen`: end an HTTP session after this long without a request (default 1800000)",
  },
  listen: {
    type: S,
    value: "HOST:PORT",
    helpNote: "(serve over HTTP instead of stdio)",
    about:
      "serve over HTTP (`/mcp`, and `/sse` + `/messages` for 2024-11-05 hosts) instead of stdin/stdout; loopback unless `--allow-remote`",
  },
  "allow-remote": {
    type: B,
    helpNote: "(a non-loopback address)",
    about:
      "allow a non-loopback `--listen` address (needs `--listen-token-env`); `inspect`: a non-loopback `--host`",
  },
  "listen-token-env": {
    type: S,
    value: "VAR",
    helpNote: "(the bearer token HTTP hosts must send)",
    about: "every HTTP request must carry `Authorization: Bearer $VAR`",
  },
  port: {
    type: S,
    value: "N",
    helpNote: "(default: a free port)",
    about: "the port to serve the explorer on (default: a free one)",
  },
  host: {
    type: S,
    value: "ADDR",
    helpNote: "(default 127.0.0.1; another needs --allow-remote)",
    about:
      "the address to serve the explorer on (default `127.0.0.1`; a non-loopback one needs `--allow-remote`)",
  },
  "no-open": { type: B, about: "print the URL without opening a browser" },
  help: { type: B, short: "h", scope: "everywhere" },
  version: { type: B, short: "V", scope: "everywhere" },
  debug: { type: B, scope: "everywhere", about: "include redacted causes in the error record" },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAGS;

type ValueOf<F> = F extends { type: "boolean" } ? boolean : F extends { multiple: true } ? string[] : string;

/** The parsed options of one command line. */
export type Values = { [K in FlagName]?: ValueOf<(typeof FLAGS)[K]> };

const NAMES = Object.keys(FLAGS) as FlagName[];
const spec = (flag: string): FlagSpec | undefined =>
  Object.hasOwn(FLAGS, flag) ? (FLAGS as Record<string, FlagSpec>)[flag] : undefined;

/** The table in the argument parser's form. */
export const PARSE_OPTIONS = Object.fromEntries(
  NAMES.map((name) => {
    const f: FlagSpec = FLAGS[name];
    return [
      name,
      { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) },
    ];
  }),
) as Record<FlagName, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** Every option name, in the table's order. */
export function allFlags(): FlagName[] {
  return [...NAMES];
}

const scoped = (...scopes: FlagSpec["scope"][]) => NAMES.filter((n) => scopes.includes(spec(n)!.scope));

/** How to reach a server and what to spend on it: every command that connects takes these. */
export const CONNECTION: readonly FlagName[] = scoped("connection");

/** Commands that hold a connection for an operation, and so can hear the server's log messages. */
export const OPERATION: readonly FlagName[] = scoped("connection", "operation");

/** How to sign in with OAuth. */
export const OAUTH_FLAGS = NAMES.filter((n) => spec(n)!.oauth) as readonly FlagName[];

/** What only `session start` can apply. */
export const FIXED_AT_START = NAMES.filter((n) => spec(n)!.fixed) as readonly FlagName[];

/** Whether a command whose own flags are `flags` takes `flag`. */
export function takes(flags: readonly string[], flag: string): boolean {
  return spec(flag)?.scope === "everywhere" || flags.includes(flag);
}

/** How an option reads in a command's help: `-o, --output FILE (- for stdout)`. */
export function helpUsage(flag: string): string {
  const f = spec(flag);
  if (!f) return `--${flag}`;
  const value = f.helpValue ?? f.value;
  return `${f.short ? `-${f.short}, ` : ""}--${flag}${value ? ` ${value}` : ""}${f.helpNote ? ` ${f.helpNote}` : ""}`;
}

/** The options of a command that not every connecting command takes, in its own order, for its help. */
export function extraFlags(flags: readonly string[]): string[] {
  return flags.filter((f) => !(CONNECTION as readonly string[]).includes(f));
}

export { spec as flagSpec };
