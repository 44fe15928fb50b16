/**
 * A command line read against the one flag table: the command, its positionals, the stdio
 * command after `--`, and the options, each refused by name when unknown or not the command's.
 */
import { parseArgs } from "node:util";
import { configError } from "../errors/failures.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { PARSE_OPTIONS, takes, type Values } from "./flag-table.ts";
import { didYouMean } from "./suggest.ts";

export interface Invocation {
  command: string;
  positionals: string[];
  stdio: string[] | undefined;
  values: Values;
}

export function parse(argv: readonly string[]): Invocation {
  const dash = argv.indexOf("--");
  const head = dash === -1 ? [...argv] : argv.slice(0, dash);
  const stdio = dash === -1 ? undefined : argv.slice(dash + 1);
  if (stdio !== undefined && stdio.length === 0)
    throw configError("invalid_target", "nothing follows --: give the server's command");
  let parsed: { values: Values; positionals: string[] };
  try {
    // The table's types say what each value is; parseArgs sees the table only as data.
    parsed = parseArgs({ args: head, options: PARSE_OPTIONS, allowPositionals: true, strict: true }) as {
      values: Values;
      positionals: string[];
    };
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
    const known = Object.keys(PARSE_OPTIONS).map((o) => `--${o}`);
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

/**
 * Refuses a flag the command does not use: nothing given on the command line is silently ignored.
 * `where` names the commands that take a flag (it loads them all, on this error only).
 */
export async function checkFlags(
  inv: Invocation,
  flags: readonly string[],
  where: (flag: string) => Promise<string[]>,
): Promise<void> {
  for (const [flag, value] of Object.entries(inv.values)) {
    if (value === undefined || takes(flags, flag)) continue;
    const commands = await where(flag);
    throw configError(
      "inapplicable_flag",
      `--${flag} does not apply to ${inv.command}${commands.length ? ` (it applies to ${commands.join(", ")})` : ""}`,
    );
  }
}

/** Positionals after the target: with a stdio target the target is left out. */
export function split(inv: Invocation): { target: string | undefined; rest: string[] } {
  if (inv.stdio) return { target: undefined, rest: inv.positionals };
  const [target, ...rest] = inv.positionals;
  return { target, rest };
}
