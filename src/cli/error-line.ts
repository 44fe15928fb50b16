/**
 * The error as a person reads it on a terminal: one line with the message and where it happened,
 * and a short hint on what to do. Off a terminal (or with --json) the JSON record is written
 * instead; both are built from the same record, so they never say different things.
 */
import type { ErrorCode } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalLine } from "../errors/terminal-text.ts";

const HINTS: Partial<Record<ErrorCode, string>> = {
  config: "see tether <command> --help",
  connection: "--debug shows the cause",
  protocol: "--debug shows the cause; tether probe shows how establishment went",
  timeout: "raise the budget with --timeout MS (or --discovery-timeout, --call-timeout)",
  limit: "raise the ceiling with --max-bytes N (or --discovery-max-bytes, --call-max-bytes)",
  unauthorized: "sign in with tether auth login <target>, or pass a token with --bearer-env VAR",
  forbidden: "the credentials were accepted but do not allow this",
  throttled: "the server asks to slow down; try again later",
  upstream: "the server failed; --debug shows the cause",
  remote_error: "the server refused the request",
};

/** The short hint the terminal shows for an error of `code` (the web explorer shows it too). */
export function hintFor(code: string, command: string): string | undefined {
  return HINTS[code as ErrorCode]?.replace("<command>", command);
}

/** `error: <message> [code/reason at stage, phase]` and a hint line, sanitized for the terminal. */
export function errorLines(
  record: Record<string, unknown>,
  debug: { name: string; code?: string; message: string }[] | undefined,
  command: string,
): string {
  const at = `${String(record.code)}/${String(record.reason)} at ${String(record.stage)}, ${String(record.phase)}`;
  const head = terminalLine(`error: ${String(record.message)} [${at}]`);
  const cause = debug?.[0];
  const hint = cause
    ? `cause: ${cause.name}${cause.code ? ` ${cause.code}` : ""}: ${cause.message}`
    : (HINTS[record.code as ErrorCode] ?? "").replace("<command>", command || "");
  return hint ? `${head}\n${terminalLine(`hint: ${hint}`)}\n` : `${head}\n`;
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
