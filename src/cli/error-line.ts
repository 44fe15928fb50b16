/**
 * The error as a person reads it on a terminal: one line with the message and where it happened,
 * and a short hint on what to do. Off a terminal (or with --json) the JSON record is written
 * instead; both are built from the same record, so they never say different things.
 */
import type { ErrorCode } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalLine } from "../errors/terminal-text.ts";
import { TetherError } from "../errors/tether-error.ts";

/** Said only when there is a cause for --debug to show: a hint never promises what it does not add. */
const DEBUG_HINT = "--debug shows the cause";

const HINTS: Partial<Record<ErrorCode, readonly string[]>> = {
  config: ["see tether <command> --help"],
  connection: [DEBUG_HINT],
  protocol: [DEBUG_HINT, "tether probe shows how establishment went"],
  timeout: ["raise the budget with --timeout MS (or --discovery-timeout, --call-timeout)"],
  limit: ["raise the ceiling with --max-bytes N (or --discovery-max-bytes, --call-max-bytes)"],
  unauthorized: ["sign in with tether auth login <target>, or pass a token with --bearer-env VAR"],
  forbidden: ["the credentials were accepted but do not allow this"],
  throttled: ["the server asks to slow down; try again later"],
  upstream: ["the server failed", DEBUG_HINT],
  remote_error: ["the server refused the request"],
};

/**
 * Hints, by `code/reason`, for a failure of an operation that received progress notifications:
 * progress extends no budget unless the call asked for that. (A call that did ask, and ran past
 * its whole limit, `max_total_timeout`, gets the plain timeout hint.)
 */
const AFTER_PROGRESS: Readonly<Record<string, string>> = {
  "timeout/deadline_exceeded":
    "progress arrived, but extends the budget only with --progress-timeout MS (each notification restarts the call clock; --call-timeout bounds the whole call)",
};

/**
 * The hint for an error of `code` where no --debug causes are shown (the web explorer's page):
 * the code's hints without the one that points at --debug.
 */
export function hintFor(code: string, command: string): string | undefined {
  const hints = (HINTS[code as ErrorCode] ?? []).filter((h) => h !== DEBUG_HINT);
  return hints.length > 0 ? hints.join("; ").replace("<command>", command) : undefined;
}

/**
 * The hint for a -32042 (URLElicitationRequiredError) that was not acted on: how many URLs the
 * server requires, never the URLs themselves (they are shown only where a person may open them).
 */
export function urlsHint(count: number): string {
  const urls = count === 1 ? "a URL" : `${count} URLs`;
  const them = count === 1 ? "it" : "them";
  return `the server requires ${urls} opened in a browser before this can succeed; tether shows ${them} and asks to open ${them} only on a terminal, without --json`;
}

/** What a person is told besides the error itself: facts about the failure that are not in its record. */
export interface ErrorHelp {
  /** The command the user ran (`tools`, `call`), for "see tether <command> --help". */
  command: string;
  /** Whether the error has a cause that --debug would show (default: it may). */
  hasCause?: boolean;
  /** A hint that fits this error better than its code's (the command that shows a tool's schema). */
  hint?: string;
  /** Progress notifications the failed operation received (see TetherError). */
  progressSeen?: number;
}

/**
 * `error: <message> [code/reason at stage, phase]`, the server's last stderr lines when it died
 * while starting (each `  | `), and a hint line; sanitized for the terminal.
 */
export function errorLines(
  record: Record<string, unknown>,
  debug: { name: string; code?: string; message: string }[] | undefined,
  help: ErrorHelp | string,
): string {
  const {
    command,
    hasCause = true,
    hint: better,
    progressSeen,
  } = typeof help === "string" ? ({ command: help } as ErrorHelp) : help;
  const at = `${String(record.code)}/${String(record.reason)} at ${String(record.stage)}, ${String(record.phase)}`;
  const lines = [terminalLine(`error: ${String(record.message)} [${at}]`)];
  const tail = typeof record.stderrTail === "string" ? record.stderrTail.split("\n") : [];
  for (const line of tail) lines.push(terminalLine(`  | ${line}`));
  const cause = debug?.[0];
  const hint = cause
    ? `cause: ${cause.name}${cause.code ? ` ${cause.code}` : ""}: ${cause.message}`
    : (better ??
      (tail.length > 0
        ? "above: the end of the server's stderr; --server-stderr passes all of it through"
        : (((progressSeen ?? 0) > 0 ? AFTER_PROGRESS[`${record.code}/${record.reason}`] : undefined) ??
          (HINTS[record.code as ErrorCode] ?? [])
            .filter((h) => hasCause || h !== DEBUG_HINT)
            .join("; ")
            .replace("<command>", command || ""))));
  if (hint) lines.push(terminalLine(`hint: ${hint}`));
  return `${lines.join("\n")}\n`;
}

/**
 * A spawn that failed because the command is missing or not executable, said in those words and
 * naming the command (the user's own): the cause's error code decides, never message text.
 */
export function spawnProblem(error: Error, command: string | undefined): string | undefined {
  if (command === undefined) return undefined;
  let e: unknown = error.cause;
  for (let i = 0; i < 8 && e instanceof Error; i++) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOENT")
      return `the server command ${command} was not found (check the name and PATH; a stdio server gets a short environment, add variables with -e)`;
    if (code === "EACCES") return `the server command ${command} is not executable`;
    e = e.cause;
  }
  return undefined;
}

/** `--debug`: the chain of causes, names and redacted messages only (never stacks). */
export function causes(error: Error, redactor: Redactor): { name: string; code?: string; message: string }[] {
  const out: { name: string; code?: string; message: string }[] = [];
  let e: unknown = error.cause;
  for (let i = 0; i < 8 && e; i++) {
    // Our own error relabelled for where it was met says nothing new: its cause may.
    if (e instanceof TetherError && e.message === error.message) {
      e = e.cause;
      continue;
    }
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
