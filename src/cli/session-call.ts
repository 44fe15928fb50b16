/**
 * `tether call @NAME TOOL [ARGS]`, the hot path of sessions, with the least loaded: the command
 * line read for the few flags a call on a session takes, one request on the session socket
 * (sessions/tool-call.ts: the session process lists, checks the arguments and calls), and the
 * result, progress and error written as `call` writes them. Any other command line (another
 * flag, `--`, a number that is not plain digits within its limit, arguments it cannot read) goes to
 * the whole CLI, unchanged: so whatever is refused before the session is reached is refused by
 * the whole CLI's own code, and what this path writes is what `call` writes.
 */

import { environmentSecrets, Redactor } from "../errors/redact.ts";
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import { LIMITS, type LimitName } from "../options/limits.ts";
import { sessionPlace } from "../sessions/folder.ts";
import { SessionLink } from "../sessions/link.ts";
import { validSessionName } from "../sessions/names.ts";
import { callOnSession } from "../sessions/tool-call.ts";
import { type GivenArgs, parseToolArgs } from "./args.ts";
import { errorLines, urlsHint } from "./error-line.ts";
import { EXIT_STATUS, EXIT_TOOL_ERROR } from "./exit-codes.ts";
import type { Io } from "./io.ts";
import { progressRecord, progressStatus } from "./progress-event.ts";
import { renderCall } from "./render.ts";
import { ARGUMENT_REASONS, schemaHintFor, shellWord } from "./schema-hint.ts";
import { StatusLine } from "./status-line.ts";

/** The numeric flags this path reads, each with the limit that bounds it (as numberFlag checks). */
const NUMBERS: Readonly<Record<string, LimitName>> = {
  timeout: "timeoutMs",
  "discovery-timeout": "timeoutMs",
  "connect-timeout": "timeoutMs",
  "call-timeout": "timeoutMs",
  "progress-timeout": "timeoutMs",
  "max-bytes": "maxResponseBytes",
  "discovery-max-bytes": "maxResponseBytes",
  "call-max-bytes": "maxResponseBytes",
};

interface CallLine {
  session: string;
  tool: string;
  given: GivenArgs;
  json: boolean;
  events: boolean;
  numbers: Record<string, number | undefined>;
}

/** The command line, when it is one this path takes as it stands; else undefined. */
export function sessionCallLine(argv: readonly string[]): CallLine | undefined {
  const [command, target, tool, ...more] = argv;
  if (command !== "call" || !target?.startsWith("@") || !validSessionName(target.slice(1))) return undefined;
  if (tool === undefined || tool.startsWith("-")) return undefined;
  const words: string[] = [];
  const numbers: Record<string, number | undefined> = {};
  const seen = new Set<string>();
  let json = false;
  let events = false;
  for (let i = 0; i < more.length; i++) {
    const word = more[i]!;
    if (!word.startsWith("-")) {
      words.push(word);
      continue;
    }
    if (!word.startsWith("--")) return undefined;
    const eq = word.indexOf("=");
    const flag = word.slice(2, eq === -1 ? undefined : eq);
    if (seen.has(flag)) return undefined;
    seen.add(flag);
    if (flag === "json" || flag === "events") {
      if (eq !== -1) return undefined;
      if (flag === "json") json = true;
      else events = true;
      continue;
    }
    const which = NUMBERS[flag];
    if (which === undefined) return undefined;
    const raw = eq === -1 ? more[++i] : word.slice(eq + 1);
    if (raw === undefined || !/^\d{1,10}$/.test(raw)) return undefined;
    const value = Number(raw);
    if (value < 1 || value > LIMITS[which].max) return undefined;
    numbers[flag] = value;
  }
  let given: GivenArgs;
  try {
    given = parseToolArgs(words, undefined);
  } catch {
    return undefined;
  }
  return { session: target.slice(1), tool, given, json, events, numbers };
}

type Main = (argv: readonly string[], io: Io) => Promise<number>;

/**
 * Runs `call @NAME` here when the command line is one this path takes, else the whole CLI
 * (`whole` loads it: this module never imports it, so its bundle stays small).
 */
export async function sessionCall(
  argv: readonly string[],
  io: Io,
  whole: () => Promise<Main>,
): Promise<number> {
  const line = sessionCallLine(argv);
  if (!line) return (await whole())(argv, io);
  const environment = environmentSecrets(io.env);
  const redactor = new Redactor(environment.secrets, { ambient: environment.ambient });
  const n = line.numbers;
  const status = io.stderrIsTty && !line.json && !line.events ? new StatusLine(io.stderr) : undefined;
  let link: SessionLink | undefined;
  /** What `call` names after an argument or tool error: `tether tool @NAME TOOL`. */
  const schemaHint = () =>
    schemaHintFor(
      ["tether", "tool", `@${line.session}`, line.tool]
        .map((w, i) => (i === 0 ? w : shellWord(redactor.redactSecrets(w))))
        .join(" "),
    );
  try {
    link = await SessionLink.forSession(sessionPlace(io.env), line.session, io.signal);
    const progressTimeout = n["progress-timeout"];
    const result = await callOnSession(link, {
      session: line.session,
      tool: line.tool,
      args: line.given.args,
      plain: line.given.plain,
      budgets: {
        callTimeoutMs: n["call-timeout"] ?? n.timeout,
        callMaxBytes: n["call-max-bytes"] ?? n["max-bytes"],
        discoveryTimeoutMs: n["discovery-timeout"] ?? n["connect-timeout"] ?? n.timeout,
        discoveryMaxBytes: n["discovery-max-bytes"] ?? n["max-bytes"],
      },
      options: {
        signal: io.signal,
        onProgress: (p) => {
          status?.show(progressStatus(p));
          if (line.events) io.stderr(`${terminalJson(redactor.redactDocument(progressRecord(p)))}\n`);
        },
        ...(progressTimeout !== undefined
          ? { resetTimeoutOnProgress: true, timeoutMs: progressTimeout, maxTotalTimeoutMs: n["call-timeout"] }
          : {}),
      },
    });
    status?.clear();
    io.stdout(
      line.json
        ? `${terminalJson(redactor.redactDocument(result))}\n`
        : renderCall(redactor.redactDocument(result)),
    );
    if (result.isError !== true) return 0;
    if (io.stderrIsTty && !line.json) {
      // After the result, which goes out first: as `call` does.
      io.flush?.();
      io.stderr(`${terminalLine(`hint: ${schemaHint()}`)}\n`);
    }
    return EXIT_TOOL_ERROR;
  } catch (error) {
    status?.clear();
    // A session process older than this command does not know the one-request call: the whole
    // CLI asks it the long way (nothing was sent to the server).
    if (error instanceof TetherError && error.code === "config" && error.reason === "session_protocol") {
      link?.close();
      link = undefined;
      return (await whole())(argv, io);
    }
    const e =
      error instanceof TetherError
        ? error
        : asTetherError(error, { stage: "config", phase: "discovery", redactor });
    const record: Record<string, unknown> = { ...e.recordFor(redactor) };
    io.stderr(
      io.stderrIsTty && !line.json
        ? errorLines(record, undefined, {
            command: "call",
            progressSeen: e.progressSeen,
            hint: e.urlElicitations
              ? urlsHint(e.urlElicitations.length)
              : e.code === "config" && ARGUMENT_REASONS.has(e.reason)
                ? schemaHint()
                : undefined,
          })
        : `${terminalJson(record)}\n`,
    );
    return EXIT_STATUS[e.code];
  } finally {
    link?.close();
  }
}
