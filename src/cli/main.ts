/**
 * The CLI's entry: reads the command line, answers --version and --help, finds the command in
 * the command table (commands/table.ts), checks its flags, and runs it in its context. Every
 * failure ends here as one error record and the exit status its code maps to.
 */

import { configError } from "../errors/failures.ts";
import { environmentSecrets, Redactor } from "../errors/redact.ts";
import { terminalJson } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import { checkFlags, parse } from "./argv.ts";
import { type Context, context } from "./command.ts";
import { COMMAND_NAMES, commandsTaking, loadCommand } from "./commands/table.ts";
import { causes, type ErrorHelp, errorLines, spawnProblem } from "./error-line.ts";
import { EXIT_STATUS } from "./exit-codes.ts";
import type { Io } from "./io.ts";
import type { StageLine } from "./stage-line.ts";
import { didYouMean } from "./suggest.ts";
import type { CliTrace } from "./trace.ts";
import { VERSION } from "./version.ts";

/**
 * Runs one CLI invocation and returns its exit status. Output goes through `io`; on failure,
 * stderr gets exactly one JSON error record (after any --events lines) and stdout nothing.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let stageLine: StageLine | undefined;
  let trace: CliTrace | undefined;
  const closing: Promise<void>[] = [];
  try {
    const status = await run(
      argv,
      io,
      (line) => {
        stageLine = line;
      },
      closing,
      (t) => {
        trace = t;
      },
    );
    trace?.end();
    if (closing.length > 0) {
      // The output is whole once run returns: it goes out now, then the connections finish closing.
      stageLine?.clear();
      io.flush?.();
      await Promise.all(closing);
    }
    return status;
  } finally {
    stageLine?.clear();
    // With --trace, after everything else the command wrote: the waterfall, and the OTLP export.
    await trace?.report();
  }
}

async function run(
  argv: readonly string[],
  io: Io,
  onStageLine: (line: StageLine | undefined) => void,
  closing: Promise<void>[],
  onTrace: (trace: CliTrace) => void,
): Promise<number> {
  // Everything after `--` is the server's: only the words before it are ours to read.
  const dash = argv.indexOf("--");
  const ours = dash === -1 ? argv : argv.slice(0, dash);
  let debug = ours.includes("--debug");
  // One redactor for everything this run prints; it learns each configured secret as options
  // are built, so output written afterwards (events included) never carries one.
  const environment = environmentSecrets(io.env);
  const redactor = new Redactor(environment.secrets, { ambient: environment.ambient });
  /** A result document for stdout: secrets redacted in every string, then JSON safe for a terminal. */
  const jsonOut = (doc: unknown) => `${terminalJson(redactor.redactDocument(doc))}\n`;
  /** The error for a person on a terminal (without --json), else the one JSON record. */
  const writeError = (record: Record<string, unknown>, help: Omit<ErrorHelp, "command"> = {}) => {
    if (io.stderrIsTty && !ours.includes("--json"))
      io.stderr(
        errorLines(record, record.debug as { name: string; message: string }[] | undefined, {
          ...help,
          command: ours.find((a) => !a.startsWith("-")) ?? "",
        }),
      );
    else io.stderr(`${terminalJson(record)}\n`);
  };
  let ctx: Context | undefined;
  let trace: CliTrace | undefined;
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
      const topic = inv.command === "help" ? await loadCommand(inv.positionals[0] ?? "") : undefined;
      if (topic) {
        io.stdout(commandHelp(topic));
        return 0;
      }
      const asked = inv.values.help && inv.command ? await loadCommand(inv.command) : undefined;
      io.stdout(asked ? commandHelp(asked) : HELP);
      return inv.command === "" && !inv.values.help ? 2 : 0;
    }
    const command = await loadCommand(inv.command);
    if (!command)
      throw configError(
        "unknown_command",
        `unknown command ${JSON.stringify(inv.command.slice(0, 40))}${didYouMean(inv.command, COMMAND_NAMES) || " (see tether --help)"}`,
      );
    await checkFlags(inv, command.flags, commandsTaking);
    const quiet = command.quiet === true;
    if (inv.values.trace) {
      // The SDK and the waterfall load only with --trace (the exporter only with an endpoint too).
      trace = await (await import("./trace.ts")).CliTrace.start(command.name, io, redactor);
      onTrace(trace);
    }
    ctx = context({
      inv,
      io,
      redactor,
      jsonOut,
      writeError,
      closing,
      onStageLine,
      commands: COMMAND_NAMES,
      quiet,
      tracing: trace?.options,
    });
    return await command.run(ctx);
  } catch (error) {
    const e =
      error instanceof TetherError
        ? error
        : asTetherError(error, { stage: "config", phase: "discovery", redactor });
    const record: Record<string, unknown> = { ...e.recordFor(redactor) };
    const spawnFailure = e.stage === "spawn" ? spawnProblem(e, ctx?.spawned) : undefined;
    if (spawnFailure) record.message = redactor.messageText(spawnFailure);
    const found = causes(e, redactor);
    if (debug) record.debug = found;
    trace?.failed(e.code);
    writeError(record, { hasCause: found.length > 0, hint: ctx?.hintFor(e), progressSeen: e.progressSeen });
    return EXIT_STATUS[e.code];
  }
}
