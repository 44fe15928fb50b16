// The CLI as a process: signals, stdout written whole once the result is known, the exit status.
// Loaded by bin.ts once it knows a command will run, so a bare `--version` never pays for it; bin.ts
// hands it the entry that runs the command (main.ts, or session-call.ts for a call on a session).
import { isatty } from "node:tty";
import { interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { CLEANUP_GRACE_MS } from "../transport/grace.ts";
import { readStdinBounded } from "./args.ts";
import { EXIT_STATUS } from "./exit-codes.ts";
import type { Io } from "./io.ts";

type Prompts = Pick<typeof import("./ask.ts"), "askOnTerminal" | "askAsync">;

/**
 * After the first SIGINT or SIGTERM, how long the orderly shutdown may take: the call is cancelled
 * and the connection closed within its cleanup grace; the rest is room for a slow machine.
 */
const INTERRUPTED_EXIT_MS = 2 * CLEANUP_GRACE_MS;

/**
 * Runs one command as this process. The first signal cancels: the call in flight is abandoned (with a cancellation notice to the
 * server) and the connection closed, the server's whole process tree with it. A second signal, or
 * a shutdown that overruns, exits at once; the exit itself kills what is left of any server tree.
 * SIGHUP (the terminal went away) counts too: a stdio server runs in its own session and no longer
 * hears the terminal, so we are the ones who end it.
 */
export async function runCli(
  argv: readonly string[],
  main: (argv: readonly string[], io: Io) => Promise<number>,
  /** The terminal prompts (ask.ts), loaded only where a person can answer. */
  prompts: () => Promise<Prompts>,
): Promise<void> {
  const controller = new AbortController();
  let finished = false;
  let interrupted = false;
  const onSignal = (name: NodeJS.Signals) => {
    if (interrupted) {
      exitNow(name);
      return;
    }
    interrupted = true;
    controller.abort(new Error(name));
    setTimeout(() => exitNow(name), INTERRUPTED_EXIT_MS).unref();
  };
  const signals: NodeJS.Signals[] =
    process.platform === "win32" ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const name of signals) process.on(name, onSignal);

  /** Exits now with the one error record, unless main already finished and wrote its own. */
  function exitNow(name: NodeJS.Signals): void {
    if (finished) return;
    finished = true;
    const error = interruptError(new Interrupt("caller", "cancelled", undefined, new Error(name)), {
      stage: "close",
      phase: "call",
    });
    process.stderr.write(`${JSON.stringify(error.toJSON())}\n`);
    process.exit(EXIT_STATUS.cancelled);
  }

  const out: (string | Uint8Array)[] = [];
  /** Writes stdout's pending output now (pipes, files and terminals take it synchronously here). */
  const flush = (done?: () => void) => {
    const whole = Buffer.concat(out.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
    out.length = 0;
    process.stdout.write(whole, done);
  };
  // Questions are asked only where a person can answer: the prompt code loads only then.
  // isatty asks the descriptor; process.stdin and process.stderr would each build a stream to say.
  const ask = isatty(0) && isatty(2) ? await prompts() : undefined;
  const status = await main(argv, {
    stdout: (t) => {
      out.push(t);
    },
    stdoutNow: (t) => {
      process.stdout.write(t);
    },
    stdoutBytes: (b) => {
      out.push(b);
    },
    flush: () => flush(),
    // Lifecycle events stream as they come; the error record is the last line.
    stderr: (t) => {
      process.stderr.write(t);
    },
    env: process.env,
    isTty: process.stdout.isTTY === true,
    stderrIsTty: isatty(2),
    columns: process.stdout.columns,
    stderrColumns: process.stderr.columns,
    signal: controller.signal,
    readStdin: () => readStdinBounded(process.stdin),
    askLine: ask?.askOnTerminal,
    askAsync: ask?.askAsync,
  });
  finished = true;
  // Output is written whole once it is known (main flushes a result before the server has exited,
  // or it goes here at the end), so a failure never leaves anything partial on stdout.
  flush(() => process.exit(status));
}
