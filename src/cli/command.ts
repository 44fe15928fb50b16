/**
 * What a command is (one module under commands/, named in commands/table.ts) and what it is handed
 * to run: the parsed command line, the output, the run's one redactor, and the ways to build
 * connect options and open a client for its target.
 */
import { writeFileSync } from "node:fs";
import type { Client, Progress } from "../client/api.ts";
import { LOGGING_LEVELS, type LoggingLevel } from "../client/results.ts";
import { configError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { LIMITS } from "../options/limits.ts";
import type { ConnectOptions, TracingOptions } from "../options/options.ts";
import { type Invocation, split } from "./argv.ts";
import { connectOptions, learnSecrets } from "./connect-options.ts";
import { urlElicitationsOf } from "./elicit.ts";
import type { ErrorHelp } from "./error-line.ts";
import { urlsHint } from "./error-line.ts";
import type { FlagName } from "./flag-table.ts";
import type { Io } from "./io.ts";
import { progressRecord } from "./progress-event.ts";
import { type Style, styleFor } from "./render.ts";
import { ARGUMENT_REASONS, shellWord } from "./schema-hint.ts";

export { shellWord };

import { isSessionTarget } from "./session-target.ts";
import { StageLine } from "./stage-line.ts";

export interface Command {
  name: string;
  /** Its help: the usage line, what it does, and examples, one a line. */
  usage: string;
  summary: string;
  examples: string;
  /** The options it takes beyond --help, --version and --debug (see flag-table.ts). */
  flags: readonly FlagName[];
  /** Never connects and shows no stage line, not even while it starts. */
  quiet?: true;
  run(ctx: Context): Promise<number>;
}

/** A command module's one export. */
export interface CommandModule {
  command: Command;
}

export interface Context {
  inv: Invocation;
  io: Io;
  /** Every command's name, in the command table's order. */
  commands: readonly string[];
  /** The target (absent with a stdio command after --), and the positionals after it. */
  target: string | undefined;
  rest: string[];
  json: boolean;
  style: Style;
  redactor: Redactor;
  events: ((e: LifecycleEvent) => void) | undefined;
  /** With --events: a call's progress notification as one more event line. */
  progress: ((p: Progress) => void) | undefined;
  logLevel: LoggingLevel | undefined;
  /** The server command this run starts, named when it cannot be started. */
  spawned: string | undefined;
  /** A result document for stdout: secrets redacted in every string, then JSON safe for a terminal. */
  jsonOut(doc: unknown): string;
  /** The error for a person on a terminal (without --json), else the one JSON record. */
  writeError(record: Record<string, unknown>, help?: Omit<ErrorHelp, "command">): void;
  /**
   * What shows the arguments of the tool (or prompt) this command named, once it named one
   * (`tether tool <target> <name> shows its schema`): the hint after an argument error.
   */
  argumentHint: string | undefined;
  /** A hint for this error that fits better than its code's, if the command knows one. */
  hintFor(error: TetherError): string | undefined;
  /**
   * Another command on this run's target, as the user would type it (`tether tool my-server
   * echo`, or with a stdio server `tether tool echo -- node server.js`), configured secrets
   * redacted: for hints and examples.
   */
  commandFor(command: string, words: readonly string[]): string;
  /** Options for `target`, secrets learned, with the run's events and signal. */
  connection(
    target: string | undefined,
    inv?: Invocation,
  ): Promise<{ options: ConnectOptions; secrets: string[] }>;
  /** Options for the command's own target; its stdio command is the one named if it cannot start. */
  build(): Promise<ConnectOptions>;
  /**
   * A connected client for one command; with --log-level (outside `watch`, which prints them
   * itself) the level is set first and the server's log messages go to stderr as they arrive.
   */
  open<T>(options: ConnectOptions, fn: (client: Client) => Promise<T>): Promise<T>;
}

export interface RunParts {
  inv: Invocation;
  io: Io;
  redactor: Redactor;
  jsonOut: (doc: unknown) => string;
  writeError: (record: Record<string, unknown>, help?: Omit<ErrorHelp, "command">) => void;
  closing: Promise<void>[];
  onStageLine: (line: StageLine | undefined) => void;
  commands: readonly string[];
  quiet: boolean;
  /** With --trace: where every connection this command makes records its spans. */
  tracing?: TracingOptions;
}

/** The context a command runs in: the stage line and the events are set up here. */
export function context(parts: RunParts): Context {
  const { inv, io, redactor, closing } = parts;
  const { target, rest } = split(inv);
  const style = styleFor(io.isTty, io.columns, io.env);
  const stageLine =
    parts.quiet || inv.values.events || !io.stderrIsTty ? undefined : new StageLine(io.stderr);
  parts.onStageLine(stageLine);
  const events = inv.values.events
    ? (e: LifecycleEvent) => io.stderr(`${terminalJson(redactor.redactDocument(e))}\n`)
    : stageLine
      ? (e: LifecycleEvent) => stageLine?.event(e)
      : undefined;
  const tracing = parts.tracing ? { tracing: parts.tracing } : {};
  const logLevel = inv.values["log-level"];
  if (logLevel !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(logLevel))
    throw configError("invalid_option", `--log-level must be one of ${LOGGING_LEVELS.join(", ")}`);
  const ctx: Context = {
    inv,
    io,
    commands: parts.commands,
    target,
    rest,
    json: inv.values.json ?? false,
    style,
    redactor,
    events,
    progress: inv.values.events
      ? (p: Progress) => io.stderr(`${terminalJson(redactor.redactDocument(progressRecord(p)))}\n`)
      : undefined,
    logLevel: logLevel as LoggingLevel | undefined,
    spawned: undefined,
    jsonOut: parts.jsonOut,
    writeError: parts.writeError,
    argumentHint: undefined,
    commandFor: (command, words) => {
      const quoted = (w: string) => shellWord(redactor.redactSecrets(w));
      const config = inv.values.config === undefined ? [] : ["--config", inv.values.config];
      const head = [command, ...(target === undefined ? [] : [target]), ...words, ...config];
      const tail = inv.stdio ? ["--", ...inv.stdio] : [];
      return ["tether", ...head, ...tail].map((w, i) => (i === 0 ? w : quoted(w))).join(" ");
    },
    hintFor: (error) =>
      error.urlElicitations !== undefined
        ? urlsHint(error.urlElicitations.length)
        : error.code === "config" && ARGUMENT_REASONS.has(error.reason)
          ? ctx.argumentHint
          : undefined,
    connection: async (t, i = inv) => {
      const { options, secrets } = await connectOptions(i, t, io);
      return {
        options: {
          ...learnSecrets(options, secrets, redactor),
          onEvent: events,
          signal: io.signal,
          ...tracing,
        },
        secrets,
      };
    },
    build: async () => {
      const { options, secrets } = await connectOptions(inv, target, io);
      ctx.spawned = options.command;
      return {
        ...learnSecrets(options, secrets, redactor),
        onEvent: events,
        signal: io.signal,
        ...tracing,
      } satisfies ConnectOptions;
    },
    open: (options, fn) => {
      // URL elicitations the person agreed to open are waited for after the result is out: the
      // server's completion notification, within the call budget (see elicit.ts).
      const waits = urlElicitationsOf(options.handlers?.elicitation);
      let unwatch: (() => void) | undefined;
      const afterwards = waits
        ? async () => {
            // The result goes out first: main flushes it in this turn, before it awaits the closes.
            await new Promise((resolve) => setImmediate(resolve));
            await waits.settle(callBudgetMs(options), io.signal);
            unwatch?.();
          }
        : undefined;
      return withClient(
        options,
        async (c) => {
          if (waits)
            unwatch = c.onNotification("notifications/elicitation/complete", (n) =>
              waits.complete(n.params?.elicitationId),
            );
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
        afterwards,
        // A session has no establishment to show: once attached, the stage line goes, and a
        // call's status line has stderr to itself.
        () => stageLine?.clear(),
      );
    },
  };
  return ctx;
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
  /** After a success, before the close: the connection stays up while it runs. Never rejects. */
  afterwards?: () => Promise<void>,
  /** Once a session (`@NAME`) is attached. */
  onAttached?: () => void,
): Promise<T> {
  // `@NAME` reaches a live session instead of connecting; closing it leaves the session up.
  let client: Client;
  if (isSessionTarget(target)) {
    client = await (await import("./session-attach.ts")).attachSession(target, options, env);
    onAttached?.();
  } else client = await (await import("../connect/connect.ts")).connect(options);
  let result: T;
  try {
    result = await fn(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  closing.push(afterwards ? afterwards().then(() => client.close()) : client.close());
  return result;
}

/** Stdin's text when `--args-file -` asks for it. */
/** A call's budget in ms: --call-timeout, else --timeout, else the default. */
export function callBudgetMs(options: ConnectOptions): number {
  return options.call?.timeoutMs ?? options.timeoutMs ?? LIMITS.timeoutMs.default;
}

export async function stdinArgs(inv: Invocation, io: Io): Promise<string | undefined> {
  if (inv.values["args-file"] !== "-") return undefined;
  if (!io.readStdin) throw configError("invalid_args", "--args-file - needs a stdin to read");
  return io.readStdin();
}

/** Writes bytes the user asked for to FILE, or with `-` to stdout, as they are. */
export function writeOutput(path: string, bytes: Uint8Array, io: Io): void {
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
