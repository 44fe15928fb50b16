/**
 * The entry of `tether call @NAME ...`, bundled on its own into one file (dist/tether-session.mjs,
 * see scripts/bundle-cli.mjs): the process shell (signals, output, exit) and the one-request call
 * on the session. A cold start pays for each file it loads; this path loads this one. Whatever it
 * does not take, it hands to `whole`, the whole CLI, loaded only then.
 */
import { runCli } from "./cli-process.ts";
import type { Io } from "./io.ts";
import { sessionCall } from "./session-call.ts";

type Main = (argv: readonly string[], io: Io) => Promise<number>;

/** `whole` and `prompts` load the whole CLI and the terminal prompts, each only when needed. */
export function runSessionCall(
  argv: readonly string[],
  whole: () => Promise<Main>,
  prompts: Parameters<typeof runCli>[2],
): Promise<void> {
  return runCli(argv, (a, io) => sessionCall(a, io, whole), prompts);
}
