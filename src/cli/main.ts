import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { AuthRecord, TokenStore } from "../auth/token-store.ts";
import type { Client } from "../client/client.ts";
import { connect } from "../connect/connect.ts";
import { configError, protocolError } from "../errors/failures.ts";
import { environmentSecrets, Redactor, secretsOf } from "../errors/redact.ts";
import { terminalBlock, terminalJson } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import type { LimitName } from "../options/limits.ts";
import type { ConnectOptions } from "../options/options.ts";
import { hasUrlCredentials, limit, urlCredentialSecrets } from "../options/resolve.ts";
import { parseToolArgs } from "./args.ts";
import { AUTH_FLAGS, authOptions, runAuth } from "./auth-command.ts";
import { completionScript } from "./completion.ts";
import { configEnvironment, findServer, listServers } from "./config.ts";
import { renderServers } from "./config-listing.ts";
import { cacheDir, FileEraHints } from "./era-hint-file.ts";
import { EXIT_STATUS, EXIT_TOOL_ERROR } from "./exit-codes.ts";
import { commandHelp, HELP, VERSION } from "./help.ts";
import type { Io } from "./io.ts";
import { probeAll } from "./probe.ts";
import { renderCall, renderList, renderText, renderTools, styleFor } from "./render.ts";
import { StageLine } from "./stage-line.ts";

const OPTIONS = {
  transport: { type: "string" },
  header: { type: "string", short: "H", multiple: true },
  env: { type: "string", short: "e", multiple: true },
  "bearer-env": { type: "string" },
  "protocol-version": { type: "string" },
  "max-protocol-version": { type: "string" },
  timeout: { type: "string" },
  "discovery-timeout": { type: "string" },
  "connect-timeout": { type: "string" },
  "call-timeout": { type: "string" },
  "probe-timeout": { type: "string" },
  "handshake-timeout": { type: "string" },
  "max-bytes": { type: "string" },
  "discovery-max-bytes": { type: "string" },
  "call-max-bytes": { type: "string" },
  "max-frame-bytes": { type: "string" },
  retry: { type: "string" },
  json: { type: "boolean" },
  events: { type: "boolean" },
  debug: { type: "boolean" },
  "server-stderr": { type: "boolean" },
  config: { type: "string" },
  "args-file": { type: "string" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  ...AUTH_FLAGS,
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

/** A numeric flag: digits only, then the library's own rule for the limit (P2), named by the flag. */
function numberFlag(values: Values, flag: keyof Values, which: LimitName): number | undefined {
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

interface Invocation {
  command: string;
  positionals: string[];
  stdio: string[] | undefined;
  values: Values;
}

function parse(argv: readonly string[]): Invocation {
  const dash = argv.indexOf("--");
  const head = dash === -1 ? [...argv] : argv.slice(0, dash);
  const stdio = dash === -1 ? undefined : argv.slice(dash + 1);
  if (stdio !== undefined && stdio.length === 0)
    throw configError("invalid_target", "nothing follows --: give the server's command");
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: head, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (cause) {
    throw configError("invalid_flag", "unknown or malformed option (see tether --help)", cause);
  }
  const [command = "", ...positionals] = parsed.positionals;
  return { command, positionals, stdio, values: parsed.values };
}

/** Builds connect options from the target (URL, config name, or the stdio command after --) and the flags. */
function connectOptions(
  inv: Invocation,
  target: string | undefined,
  io: Io,
): { options: ConnectOptions; secrets: string[] } {
  const v = inv.values;
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
  const options: ConnectOptions = {
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
    serverStderr: v["server-stderr"] ? "inherit" : "ignore",
    // A one-shot command has no use for the optional server-to-client stream.
    listen: false,
    eraHints: new FileEraHints(cacheDir(io.env)),
  };
  if (v.retry !== undefined) {
    if (!/^\d+$/.test(v.retry) || Number(v.retry) < 1 || Number(v.retry) > 10) {
      throw configError("invalid_limit", "--retry must be a whole number from 1 to 10");
    }
    options.recovery = { maxAttempts: Number(v.retry) };
  }
  const secrets = [...Object.values(headers), ...Object.values(env ?? {})];
  if (inv.stdio) {
    const [command, ...args] = inv.stdio;
    return { options: { ...options, command, args, env }, secrets };
  }
  if (!target)
    throw configError(
      "invalid_target",
      "give a target: a URL, a configured server's name, or -- and a command",
    );
  // URL userinfo is sent as Basic credentials: like an Authorization header, it stands instead of OAuth.
  const withAuth = (h: Record<string, string>, url?: string) => {
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
        auth: withAuth(headers, target),
      },
      secrets,
    };
  }
  // The one bounded config loader decides which definition the name means (CONTRACT S3).
  const entry = findServer(target, v.config, configEnvironment(io.env));
  secrets.push(...entry.secrets);
  if (entry.transport === "stdio") {
    return {
      options: {
        ...options,
        command: entry.command,
        args: entry.args,
        env: { ...entry.env, ...env },
        cwd: entry.cwd,
      },
      secrets,
    };
  }
  return {
    options: {
      ...options,
      url: entry.url,
      headers: { ...entry.headers, ...headers },
      auth: withAuth({ ...entry.headers, ...headers }, entry.url),
      transport: v.transport
        ? (transport as ConnectOptions["transport"])
        : entry.transport === "sse"
          ? "sse"
          : "auto",
    },
    secrets,
  };
}

/** Positionals after the target: with a stdio target the target is left out. */
function split(inv: Invocation): { target: string | undefined; rest: string[] } {
  if (inv.stdio) return { target: undefined, rest: inv.positionals };
  const [target, ...rest] = inv.positionals;
  return { target, rest };
}

/**
 * Teaches the CLI's redactor every secret in options just built: what `connectOptions` reported
 * (header and env values, client secrets) and what the options themselves hold (the bare token
 * after an auth scheme, URL userinfo and query values, env values). The token store is wrapped so
 * that OAuth tokens read or written during the run are learned too. Returns the options to use.
 */
function learnSecrets(options: ConnectOptions, secrets: string[], redactor: Redactor): ConnectOptions {
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

async function withClient<T>(options: ConnectOptions, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = await connect(options);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/**
 * Runs one CLI invocation and returns its exit status. Output goes through `io`; on failure,
 * stderr gets exactly one JSON error record (after any --events lines) and stdout nothing.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let stageLine: StageLine | undefined;
  try {
    return await run(argv, io, (line) => {
      stageLine = line;
    });
  } finally {
    stageLine?.clear();
  }
}

async function run(
  argv: readonly string[],
  io: Io,
  onStageLine: (line: StageLine | undefined) => void,
): Promise<number> {
  let stageLine: StageLine | undefined;
  let debug = argv.includes("--debug");
  // One redactor for everything this run prints; it learns each configured secret as options
  // are built, so output written afterwards (events included) never carries one.
  const environment = environmentSecrets(io.env);
  const redactor = new Redactor(environment.secrets, { ambient: environment.ambient });
  /** A result document for stdout: secrets redacted in every string, then JSON safe for a terminal. */
  const jsonOut = (doc: unknown) => `${terminalJson(redactor.redactDocument(doc))}\n`;
  try {
    const inv = parse(argv);
    debug = inv.values.debug ?? false;
    if (inv.values.version) {
      io.stdout(`${VERSION}\n`);
      return 0;
    }
    if (inv.command === "help" && inv.positionals[0] && commandHelp(inv.positionals[0])) {
      io.stdout(commandHelp(inv.positionals[0])!);
      return 0;
    }
    if (inv.values.help || inv.command === "" || inv.command === "help") {
      const help = inv.values.help && inv.command ? commandHelp(inv.command) : undefined;
      io.stdout(help ?? HELP);
      return inv.command === "" && !inv.values.help ? 2 : 0;
    }
    if (inv.command === "completion") {
      io.stdout(completionScript(inv.positionals[0]));
      return 0;
    }
    const { target, rest } = split(inv);
    const style = styleFor(io.isTty, io.columns, io.env);
    stageLine = inv.values.events || !io.stderrIsTty ? undefined : new StageLine(io.stderr);
    onStageLine(stageLine);
    const events = inv.values.events
      ? (e: LifecycleEvent) => io.stderr(`${terminalJson(redactor.redactDocument(e))}\n`)
      : stageLine
        ? (e: LifecycleEvent) => stageLine?.event(e)
        : undefined;
    const build = () => {
      const { options, secrets } = connectOptions(inv, target, io);
      return {
        ...learnSecrets(options, secrets, redactor),
        onEvent: events,
        signal: io.signal,
      } satisfies ConnectOptions;
    };
    const json = inv.values.json ?? false;
    switch (inv.command) {
      case "tools": {
        if (rest.length > 0) throw configError("invalid_args", "tools takes only a target");
        const options = build();
        const tools = await withClient({ ...options, prefetchTools: true }, async (c) => c.cachedTools ?? []);
        io.stdout(json ? jsonOut({ tools }) : renderTools(redactor.redactDocument(tools), style));
        return 0;
      }
      case "call": {
        const [tool, ...words] = rest;
        if (!tool) throw configError("invalid_args", "call needs a tool name");
        const args = parseToolArgs(words, inv.values["args-file"]);
        const options = build();
        const result = await withClient(options, (c) => c.callTool(tool, args, { signal: io.signal }));
        io.stdout(json ? jsonOut(result) : renderCall(redactor.redactDocument(result)));
        return result.isError === true ? EXIT_TOOL_ERROR : 0;
      }
      case "resources":
      case "prompts": {
        if (rest.length > 0) throw configError("invalid_args", `${inv.command} takes only a target`);
        const options = build();
        const items = await withClient<JsonObject[]>(options, (c) =>
          inv.command === "resources" ? c.listResources() : c.listPrompts(),
        );
        io.stdout(
          json
            ? jsonOut({ [inv.command]: items })
            : renderList(redactor.redactDocument(items), inv.command === "resources" ? "uri" : "name", style),
        );
        return 0;
      }
      case "read": {
        const [uri, ...extra] = rest;
        if (!uri || extra.length > 0)
          throw configError("invalid_args", "read needs exactly one resource URI");
        const options = build();
        const result = await withClient(options, (c) => c.readResource(uri, { signal: io.signal }));
        if (inv.values.output !== undefined) {
          // Binary contents are written only when asked: decoded, to a file or (with -) to stdout,
          // byte for byte as the server sent them (neither sanitized nor redacted: the user asked for the bytes).
          const bytes = resourceBytes(result);
          if (inv.values.output === "-") io.stdoutBytes?.(bytes);
          else {
            try {
              writeFileSync(inv.values.output, bytes);
            } catch (cause) {
              throw configError("output_unwritable", "the --output file could not be written", cause);
            }
          }
          return 0;
        }
        io.stdout(json ? jsonOut(result) : renderText(redactor.redactDocument(result)));
        return 0;
      }
      case "prompt": {
        const [name, ...words] = rest;
        if (!name) throw configError("invalid_args", "prompt needs a prompt name");
        const args = parseToolArgs(words, inv.values["args-file"]);
        const stringArgs: Record<string, string> = {};
        for (const [k, val] of Object.entries(args))
          stringArgs[k] = typeof val === "string" ? val : JSON.stringify(val);
        const options = build();
        const result = await withClient(options, (c) => c.getPrompt(name, stringArgs, { signal: io.signal }));
        io.stdout(json ? jsonOut(result) : renderText(redactor.redactDocument(result)));
        return 0;
      }
      case "probe": {
        const targets = inv.stdio ? [undefined] : inv.positionals;
        if (targets.length === 0) throw configError("invalid_target", "probe needs at least one target");
        const built = targets.map((t) => {
          const { options, secrets } = connectOptions(inv, t, io);
          return {
            label: t ?? inv.stdio![0]!,
            options: { ...learnSecrets(options, secrets, redactor), onEvent: events, signal: io.signal },
          };
        });
        const report = await probeAll(built, redactor, style);
        io.stdout(json ? jsonOut({ results: report.rows }) : redactor.redactSecrets(report.table));
        if (report.firstError) {
          io.stderr(`${terminalJson(report.firstError.recordFor(redactor))}\n`);
          return EXIT_STATUS[report.firstError.code];
        }
        return 0;
      }
      case "auth": {
        const [sub, authTarget, ...extra] = inv.positionals;
        if (extra.length > 0 || inv.stdio)
          throw configError("invalid_args", "auth takes a subcommand and one target");
        return await runAuth(
          sub,
          () => {
            const built = connectOptions(inv, authTarget, io);
            const options = learnSecrets(built.options, built.secrets, redactor);
            return { ...built, options: { ...options, onEvent: events, signal: io.signal } };
          },
          {
            ...io,
            // The status row carries the authorization server's words (issuer, scopes).
            stdout: (t) =>
              io.stdout(json ? jsonOut(JSON.parse(t)) : terminalBlock(redactor.redactSecrets(t))),
            stderr: (t) => io.stderr(terminalBlock(t)),
          },
          json,
        );
      }
      case "servers": {
        io.stdout(renderServers(listServers(inv.values.config, configEnvironment(io.env)), json, style));
        return 0;
      }
      default:
        throw configError("unknown_command", "unknown command (see tether --help)");
    }
  } catch (error) {
    const e =
      error instanceof TetherError
        ? error
        : asTetherError(error, { stage: "config", phase: "discovery", redactor });
    const record: Record<string, unknown> = { ...e.recordFor(redactor) };
    if (debug) record.debug = causes(e, redactor);
    io.stderr(`${terminalJson(record)}\n`);
    return EXIT_STATUS[e.code];
  }
}

/** The first content of a resource read as bytes: a blob decoded from base64, or text as UTF-8. */
function resourceBytes(result: JsonObject): Uint8Array {
  const contents = Array.isArray(result.contents) ? result.contents : [];
  const first = contents[0];
  if (typeof first === "object" && first !== null && !Array.isArray(first)) {
    if (typeof first.blob === "string") return Buffer.from(first.blob, "base64");
    if (typeof first.text === "string") return Buffer.from(first.text, "utf8");
  }
  throw protocolError(
    { stage: "call", phase: "call" },
    "malformed_result",
    "the resource read returned no contents",
  );
}

/** `--debug`: the chain of causes, names and redacted messages only (never stacks). */
function causes(error: Error, redactor: Redactor): { name: string; code?: string; message: string }[] {
  const out: { name: string; code?: string; message: string }[] = [];
  let e: unknown = error.cause;
  for (let i = 0; i < 8 && e; i++) {
    if (e instanceof Error) {
      const code = (e as { code?: unknown }).code;
      out.push({
        name: e.name,
        code: typeof code === "string" ? code : undefined,
        message: redactor.messageText(e.message).slice(0, 500),
      });
      e = e.cause;
    } else {
      out.push({ name: typeof e, message: redactor.messageText(String(e)).slice(0, 200) });
      break;
    }
  }
  return out;
}
