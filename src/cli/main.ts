import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { Client } from "../client/api.ts";
import { type CompletionRef, LOGGING_LEVELS, type LoggingLevel } from "../client/results.ts";
import { configError, protocolError } from "../errors/failures.ts";
import { environmentSecrets, Redactor, secretsOf } from "../errors/redact.ts";
import { terminalBlock, terminalJson, terminalLine } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import type { LimitName } from "../options/limits.ts";
import { limit } from "../options/limits.ts";
import type { ConnectOptions, ConnectSettings } from "../options/options.ts";
import type { AuthRecord, TokenStore } from "../options/token-store.ts";
import { hasUrlCredentials, urlCredentialSecrets } from "../options/url-credentials.ts";
import { parseToolArgs } from "./args.ts";
import { AUTH_FLAGS } from "./auth-flags.ts";
import { BRIDGE_FLAGS } from "./bridge-flags.ts";
import { type ConfigEnvironment, configEnvironment, findServer, listServers } from "./config.ts";
import { renderServers } from "./config-listing.ts";
import { cliElicitation } from "./elicit.ts";
import { afresh, cacheDir, FileEraHints } from "./era-hint-file.ts";
import { errorLines, spawnProblem } from "./error-line.ts";
import { EXIT_STATUS, EXIT_TOOL_ERROR } from "./exit-codes.ts";
import { COMMAND_FLAGS, commandsTaking, takes } from "./flags.ts";
import type { Io } from "./io.ts";
import {
  renderCall,
  renderCompletion,
  renderList,
  renderTemplates,
  renderText,
  renderTools,
  styleFor,
} from "./render.ts";
import { findTool, fitArguments } from "./schema-args.ts";
import { checkSessionFlags, isSessionTarget } from "./session-target.ts";
import { StageLine } from "./stage-line.ts";
import { StatusLine } from "./status-line.ts";
import { didYouMean } from "./suggest.ts";
import { VERSION } from "./version.ts";
import { watch } from "./watch.ts";

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
  fresh: { type: "boolean" },
  "log-level": { type: "string" },
  task: { type: "boolean" },
  "progress-timeout": { type: "string" },
  subscribe: { type: "string", multiple: true },
  duration: { type: "string" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  ...AUTH_FLAGS,
  ...BRIDGE_FLAGS,
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
    throw optionError(cause);
  }
  const [command = "", ...positionals] = parsed.positionals;
  return { command, positionals, stdio, values: parsed.values };
}

/** An option parseArgs refused, named (it is the user's own word) with the closest known ones. */
function optionError(cause: unknown): TetherError {
  const code = (cause as { code?: unknown }).code;
  const message = cause instanceof Error ? cause.message : "";
  const named = /option '(-{1,2}[A-Za-z0-9][A-Za-z0-9-]{0,40})/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && named) {
    const known = Object.keys(OPTIONS).map((o) => `--${o}`);
    return configError(
      "invalid_flag",
      `unknown option ${named}${didYouMean(named, known) || " (see tether --help)"}`,
      cause,
    );
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && named)
    return configError("invalid_flag", `the option ${named} needs a value (see tether --help)`, cause);
  return configError("invalid_flag", "unknown or malformed option (see tether --help)", cause);
}

/** Refuses a flag the command does not use: nothing given on the command line is silently ignored. */
function checkFlags(inv: Invocation): void {
  if (!(inv.command in COMMAND_FLAGS)) return;
  for (const [flag, value] of Object.entries(inv.values)) {
    if (value === undefined || takes(inv.command, flag)) continue;
    const where = commandsTaking(flag);
    throw configError(
      "inapplicable_flag",
      `--${flag} does not apply to ${inv.command}${where.length ? ` (it applies to ${where.join(", ")})` : ""}`,
    );
  }
}

/**
 * Builds connect options from the target (URL, config name, or the stdio command after --) and the
 * flags. Asynchronous only because OAuth's option building loads when an HTTP target needs it.
 */
async function connectOptions(
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
    handlers: { elicitation: cliElicitation(io.askAsync && !v.json ? io.askAsync : undefined, io.stderr) },
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

/**
 * Connects, runs `fn`, closes. After a success the close is handed to `closing`, not awaited here:
 * the result is printed while the server shuts down (a stdio server may take a while to exit once
 * its stdin ends), and `main` still waits for every close before it returns. Close never rejects.
 */
async function withClient<T>(
  options: ConnectOptions,
  fn: (client: Client) => Promise<T>,
  closing: Promise<void>[],
  target?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  // `@NAME` reaches a live session instead of connecting; closing it leaves the session up.
  const client = isSessionTarget(target)
    ? await (await import("./session-attach.ts")).attachSession(target, options, env)
    : await (await import("../connect/connect.ts")).connect(options);
  let result: T;
  try {
    result = await fn(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  closing.push(client.close());
  return result;
}

/**
 * Runs one CLI invocation and returns its exit status. Output goes through `io`; on failure,
 * stderr gets exactly one JSON error record (after any --events lines) and stdout nothing.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let stageLine: StageLine | undefined;
  const closing: Promise<void>[] = [];
  try {
    const status = await run(
      argv,
      io,
      (line) => {
        stageLine = line;
      },
      closing,
    );
    if (closing.length > 0) {
      // The output is whole once run returns: it goes out now, then the connections finish closing.
      stageLine?.clear();
      io.flush?.();
      await Promise.all(closing);
    }
    return status;
  } finally {
    stageLine?.clear();
  }
}

async function run(
  argv: readonly string[],
  io: Io,
  onStageLine: (line: StageLine | undefined) => void,
  closing: Promise<void>[],
): Promise<number> {
  let stageLine: StageLine | undefined;
  let debug = argv.includes("--debug");
  // One redactor for everything this run prints; it learns each configured secret as options
  // are built, so output written afterwards (events included) never carries one.
  const environment = environmentSecrets(io.env);
  const redactor = new Redactor(environment.secrets, { ambient: environment.ambient });
  /** A result document for stdout: secrets redacted in every string, then JSON safe for a terminal. */
  const jsonOut = (doc: unknown) => `${terminalJson(redactor.redactDocument(doc))}\n`;
  /** The server command this run starts, named when it cannot be started. */
  let spawned: string | undefined;
  /** The error for a person on a terminal (without --json), else the one JSON record. */
  const writeError = (record: Record<string, unknown>) => {
    if (io.stderrIsTty && !argv.includes("--json"))
      io.stderr(
        errorLines(
          record,
          record.debug as { name: string; message: string }[] | undefined,
          argv.find((a) => !a.startsWith("-")) ?? "",
        ),
      );
    else io.stderr(`${terminalJson(record)}\n`);
  };
  try {
    const inv = parse(argv);
    debug = inv.values.debug ?? false;
    if (inv.values.version) {
      io.stdout(`${VERSION}\n`);
      return 0;
    }
    if (inv.values.help || inv.command === "" || inv.command === "help") {
      // The help text loads only when it is asked for.
      const { commandHelp, HELP } = await import("./help.ts");
      const topic = inv.command === "help" ? inv.positionals[0] : undefined;
      if (topic && commandHelp(topic)) {
        io.stdout(commandHelp(topic)!);
        return 0;
      }
      const help = inv.values.help && inv.command ? commandHelp(inv.command) : undefined;
      io.stdout(help ?? HELP);
      return inv.command === "" && !inv.values.help ? 2 : 0;
    }
    if (!(inv.command in COMMAND_FLAGS))
      throw configError(
        "unknown_command",
        `unknown command ${JSON.stringify(inv.command.slice(0, 40))}${didYouMean(inv.command, Object.keys(COMMAND_FLAGS)) || " (see tether --help)"}`,
      );
    checkFlags(inv);
    if (inv.command === "completion") {
      io.stdout((await import("./completion.ts")).completionScript(inv.positionals[0]));
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
    const build = async () => {
      const { options, secrets } = await connectOptions(inv, target, io);
      spawned = options.command;
      return {
        ...learnSecrets(options, secrets, redactor),
        onEvent: events,
        signal: io.signal,
      } satisfies ConnectOptions;
    };
    const json = inv.values.json ?? false;
    const logLevel = inv.values["log-level"];
    if (logLevel !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(logLevel))
      throw configError("invalid_option", `--log-level must be one of ${LOGGING_LEVELS.join(", ")}`);
    /**
     * A connected client for one command; with --log-level (outside `watch`, which prints them
     * itself) the level is set first and the server's log messages go to stderr as they arrive.
     */
    const open = <T>(options: ConnectOptions, fn: (client: Client) => Promise<T>): Promise<T> =>
      withClient(
        options,
        async (c) => {
          if (logLevel === undefined || inv.command === "watch") return fn(c);
          const stop = c.onLogMessage((m) => {
            const text = typeof m.data === "string" ? m.data : JSON.stringify(m.data);
            stageLine?.clear();
            io.stderr(
              `${terminalLine(redactor.messageText(`log ${m.level}${m.logger ? ` [${m.logger}]` : ""}: ${text}`))}\n`,
            );
          });
          try {
            await c.setLoggingLevel(logLevel as LoggingLevel, { signal: io.signal });
            return await fn(c);
          } finally {
            // Handlers run detached: messages that arrived before the result get their turn first.
            await new Promise((resolve) => setImmediate(resolve));
            stop();
          }
        },
        closing,
        target,
        io.env,
      );
    switch (inv.command) {
      case "tools": {
        if (rest.length > 0) throw configError("invalid_args", "tools takes only a target");
        const options = await build();
        // With --log-level the tools are listed after the level is set, so the listing's logs are heard.
        const tools =
          logLevel === undefined
            ? await open({ ...options, prefetchTools: true }, async (c) => c.cachedTools ?? [])
            : await open(options, (c) => c.listTools({ signal: io.signal }));
        io.stdout(json ? jsonOut({ tools }) : renderTools(redactor.redactDocument(tools), style));
        return 0;
      }
      case "call": {
        const [tool, ...words] = rest;
        if (!tool) throw configError("invalid_args", "call needs a tool name");
        const given = parseToolArgs(words, inv.values["args-file"], await stdinArgs(inv, io));
        const progressTimeout = numberFlag(inv.values, "progress-timeout", "timeoutMs");
        const callTimeout = numberFlag(inv.values, "call-timeout", "timeoutMs");
        const options = await build();
        // Progress and a task's status rewrite one line on a terminal's stderr, erased before the result.
        const status = io.stderrIsTty && !json && !inv.values.events ? new StatusLine(io.stderr) : undefined;
        const result = await open(options, async (c) => {
          // One listing gives the schema; nothing is sent to the tool until the arguments fit it.
          // A server that cannot list its tools (a JSON-RPC error) leaves the schema unknown: the
          // arguments then go as written.
          const listed = await c.listTools({ signal: io.signal }).catch((error: unknown) => {
            if (error instanceof TetherError && error.code === "remote_error") return undefined;
            throw error;
          });
          const args = listed ? fitArguments(findTool(tool, listed), given) : given.args;
          try {
            if (inv.values.task)
              return await c.callToolAsTask(tool, args, {
                signal: io.signal,
                onStatus: (t) =>
                  status?.show(`task ${t.status}${t.statusMessage ? `: ${t.statusMessage}` : ""}`),
              });
            return await c.callTool(tool, args, {
              signal: io.signal,
              onProgress: (p) =>
                status?.show(
                  `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`,
                ),
              // Each notification restarts the clock; --call-timeout still bounds the whole call.
              ...(progressTimeout !== undefined
                ? { resetTimeoutOnProgress: true, timeoutMs: progressTimeout, maxTotalTimeoutMs: callTimeout }
                : {}),
            });
          } finally {
            status?.clear();
          }
        });
        if (inv.values.output !== undefined) writeOutput(inv.values.output, callBytes(result), io);
        else io.stdout(json ? jsonOut(result) : renderCall(redactor.redactDocument(result)));
        return result.isError === true ? EXIT_TOOL_ERROR : 0;
      }
      case "types": {
        if (rest.length > 0) throw configError("invalid_args", "types takes only a target");
        const options = await build();
        const tools = await open(options, (c) => c.listTools({ signal: io.signal }));
        const { toolTypes } = await import("./types-command.ts");
        const typed = await toolTypes(redactor.redactDocument(tools));
        // -o FILE takes the declarations; stdout then has nothing, or with --json the type names.
        const file = inv.values.output === "-" ? undefined : inv.values.output;
        if (file !== undefined) writeOutput(file, Buffer.from(typed.declarations, "utf8"), io);
        if (json) io.stdout(jsonOut(file === undefined ? typed : { tools: typed.tools }));
        else if (file === undefined) io.stdout(typed.declarations);
        return 0;
      }
      case "templates": {
        if (rest.length > 0) throw configError("invalid_args", "templates takes only a target");
        const options = await build();
        const resourceTemplates = await open(options, (c) => c.listResourceTemplates({ signal: io.signal }));
        io.stdout(
          json
            ? jsonOut({ resourceTemplates })
            : renderTemplates(redactor.redactDocument(resourceTemplates), style),
        );
        return 0;
      }
      case "complete": {
        const [refWord, argWord, ...contextWords] = rest;
        const ref = completionRef(refWord);
        const pair = argWord === undefined ? undefined : /^([^=]+)=(.*)$/s.exec(argWord);
        if (!pair)
          throw configError("invalid_args", "complete needs the argument being completed as NAME=PARTIAL");
        const context: Record<string, string> = {};
        for (const word of contextWords) {
          const c = /^([^=]+)=(.*)$/s.exec(word);
          if (!c) throw configError("invalid_args", "arguments already chosen are given as NAME=VALUE");
          context[c[1]!] = c[2]!;
        }
        const options = await build();
        const result = await open(options, (c) =>
          c.complete(
            ref,
            { name: pair[1]!, value: pair[2]! },
            contextWords.length ? { arguments: context } : undefined,
            { signal: io.signal },
          ),
        );
        io.stdout(
          json ? jsonOut(result.completion) : renderCompletion(redactor.redactDocument(result.completion)),
        );
        return 0;
      }
      case "watch": {
        if (rest.length > 0) throw configError("invalid_args", "watch takes only a target");
        const duration = inv.values.duration;
        if (
          duration !== undefined &&
          (!/^\d+$/.test(duration) || Number(duration) < 1 || Number(duration) > 86_400_000)
        )
          throw configError("invalid_limit", "--duration must be a whole number of ms from 1 to 86400000");
        // Notifications may arrive on the optional server-to-client stream: it is opened here.
        const options = { ...(await build()), listen: true };
        await open(options, (c) =>
          watch(c, {
            logLevel: logLevel as LoggingLevel | undefined,
            subscribe: inv.values.subscribe ?? [],
            durationMs: duration === undefined ? undefined : Number(duration),
            json,
            signal: io.signal,
            write: io.stdoutNow ?? io.stdout,
            redactor,
          }),
        );
        return 0;
      }
      case "resources":
      case "prompts": {
        if (rest.length > 0) throw configError("invalid_args", `${inv.command} takes only a target`);
        const options = await build();
        const items = await open<JsonObject[]>(options, (c) =>
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
        const options = await build();
        const result = await open(options, (c) => c.readResource(uri, { signal: io.signal }));
        if (inv.values.output !== undefined) {
          // Binary contents are written only when asked: decoded, to a file or (with -) to stdout,
          // byte for byte as the server sent them (neither sanitized nor redacted: the user asked for the bytes).
          writeOutput(inv.values.output, resourceBytes(result), io);
          return 0;
        }
        io.stdout(json ? jsonOut(result) : renderText(redactor.redactDocument(result)));
        return 0;
      }
      case "prompt": {
        const [name, ...words] = rest;
        if (!name) throw configError("invalid_args", "prompt needs a prompt name");
        const { args } = parseToolArgs(words, inv.values["args-file"], await stdinArgs(inv, io));
        const stringArgs: Record<string, string> = {};
        for (const [k, val] of Object.entries(args))
          stringArgs[k] = typeof val === "string" ? val : JSON.stringify(val);
        const options = await build();
        const result = await open(options, (c) => c.getPrompt(name, stringArgs, { signal: io.signal }));
        io.stdout(json ? jsonOut(result) : renderText(redactor.redactDocument(result)));
        return 0;
      }
      case "probe": {
        // Every target given is probed: the named ones and, after --, the stdio command.
        const targets: (string | undefined)[] = [...inv.positionals, ...(inv.stdio ? [undefined] : [])];
        spawned = inv.stdio?.[0];
        if (targets.length === 0) throw configError("invalid_target", "probe needs at least one target");
        // One after another, so a bad target is reported in the order given.
        const built = [];
        for (const t of targets) {
          const { options, secrets } = await connectOptions(
            t === undefined ? inv : { ...inv, stdio: undefined },
            t,
            io,
          );
          built.push({
            label: t ?? inv.stdio![0]!,
            options: { ...learnSecrets(options, secrets, redactor), onEvent: events, signal: io.signal },
          });
        }
        const { probeAll } = await import("./probe.ts");
        const report = await probeAll(built, redactor, style);
        io.stdout(json ? jsonOut({ results: report.rows }) : redactor.redactSecrets(report.table));
        if (report.firstError) {
          writeError({ ...report.firstError.recordFor(redactor) });
          return EXIT_STATUS[report.firstError.code];
        }
        return 0;
      }
      case "auth": {
        const [sub, authTarget, ...extra] = inv.positionals;
        if (extra.length > 0 || inv.stdio)
          throw configError("invalid_args", "auth takes a subcommand and one target");
        const { runAuth } = await import("./auth-command.ts");
        return await runAuth(
          sub,
          async () => {
            const built = await connectOptions(inv, authTarget, io);
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
      case "bridge":
        return await (await import("./bridge-command.ts")).runBridge(
          { rest, values: inv.values },
          io,
          build,
          redactor,
        );
      case "session":
        return await (await import("./session-command.ts")).runSession({
          positionals: inv.positionals,
          build: async (t) => {
            const built = await connectOptions(inv, t, io);
            spawned = built.options.command;
            return {
              ...learnSecrets(built.options, built.secrets, redactor),
              onEvent: events,
              signal: io.signal,
            };
          },
          idleTimeout: inv.values["idle-timeout"],
          fresh: inv.values.fresh ?? false,
          json,
          events,
          redactor,
          io,
          style,
          stdio: inv.stdio !== undefined,
        });
      case "shell": {
        if (rest.length > 0) throw configError("invalid_args", "shell takes only a target");
        const options = { ...(await build()), listen: true };
        const { runShell } = await import("./shell.ts");
        return await open(options, (c) => runShell(c, { io, redactor, style, json }));
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
    const spawnFailure = e.stage === "spawn" ? spawnProblem(e, spawned) : undefined;
    if (spawnFailure) record.message = redactor.messageText(spawnFailure);
    if (debug) record.debug = causes(e, redactor);
    writeError(record);
    return EXIT_STATUS[e.code];
  }
}

/** `prompt:NAME` or `resource:URI-TEMPLATE`, the thing whose argument is completed. */
function completionRef(word: string | undefined): CompletionRef {
  const m = word === undefined ? null : /^(prompt|resource):(.+)$/s.exec(word);
  if (!m)
    throw configError("invalid_args", "complete needs a reference: prompt:NAME or resource:URI-TEMPLATE");
  return m[1] === "prompt" ? { type: "ref/prompt", name: m[2]! } : { type: "ref/resource", uri: m[2]! };
}

/** Stdin's text when `--args-file -` asks for it. */
async function stdinArgs(inv: Invocation, io: Io): Promise<string | undefined> {
  if (inv.values["args-file"] !== "-") return undefined;
  if (!io.readStdin) throw configError("invalid_args", "--args-file - needs a stdin to read");
  return io.readStdin();
}

/** Writes bytes the user asked for to FILE, or with `-` to stdout, as they are. */
function writeOutput(path: string, bytes: Uint8Array, io: Io): void {
  if (path === "-") {
    io.stdoutBytes?.(bytes);
    return;
  }
  try {
    writeFileSync(path, bytes);
  } catch (cause) {
    throw configError("output_unwritable", "the --output file could not be written", cause);
  }
}

/**
 * A call's binary content as bytes: its image, audio and embedded blob blocks decoded from
 * base64, one after another (usually there is one); a result without any is its text as UTF-8.
 */
function callBytes(result: { content: JsonValue[] }): Uint8Array {
  const binary: Buffer[] = [];
  const text: string[] = [];
  for (const block of result.content) {
    if (typeof block !== "object" || block === null || Array.isArray(block)) continue;
    if ((block.type === "image" || block.type === "audio") && typeof block.data === "string")
      binary.push(Buffer.from(block.data, "base64"));
    else if (
      typeof block.resource === "object" &&
      block.resource !== null &&
      !Array.isArray(block.resource)
    ) {
      const r = block.resource;
      if (typeof r.blob === "string") binary.push(Buffer.from(r.blob, "base64"));
      else if (typeof r.text === "string") text.push(r.text);
    } else if (block.type === "text" && typeof block.text === "string") text.push(block.text);
  }
  return binary.length > 0 ? Buffer.concat(binary) : Buffer.from(text.join("\n"), "utf8");
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
