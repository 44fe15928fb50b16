// Runs the built CLI (dist/tether.mjs) as a real child process, the way users and outside checks do.
import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { outputOf } from "./toolkit.ts";

/** The bundle under test: dist/tether.mjs, or another build named by TETHER_TEST_CLI. */
export const CLI_BIN =
  process.env.TETHER_TEST_CLI ?? fileURLToPath(new URL("../../dist/tether.mjs", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** The folder the CLI runs in (where it looks for project config files). */
  cwd?: string;
  /** Kill the child (and fail) after this long. */
  timeoutMs?: number;
  /** Send this signal after this many ms. */
  signalAfter?: { signal: NodeJS.Signals; ms: number };
  /**
   * Send this signal once `ready` resolves: an event that shows the CLI is where the test wants
   * it, e.g. the server received its call (the CLI installs its signal handlers before any I/O).
   */
  signalWhen?: { signal: NodeJS.Signals; ready: Promise<unknown> };
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  return runProcess(process.execPath, [CLI_BIN, ...args], {
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    cwd: options.cwd,
    timeoutMs: options.timeoutMs ?? 20_000,
    name: `tether ${args.join(" ")}`,
    signalAfter: options.signalAfter,
    signalWhen: options.signalWhen,
  });
}

export interface ProcessOptions extends Pick<CliOptions, "cwd" | "signalAfter" | "signalWhen"> {
  /** The child's whole environment (nothing of this process's is added). */
  env: NodeJS.ProcessEnv;
  /** Kill the child (and fail, naming it `name`) after this long. */
  timeoutMs: number;
  name: string;
  /** Written to the child's stdin, which then ends (without it, the child has no stdin). */
  input?: string;
}

/**
 * Runs `command args` with no stdin (or `input` on it), collecting its stdout and stderr, and
 * resolves once it closed; a child still running after `timeoutMs` is killed and the run fails.
 */
export function runProcess(command: string, args: string[], options: ProcessOptions): Promise<CliRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    const output = outputOf(child);
    const killer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`${options.name} did not exit within ${options.timeoutMs} ms; stderr: ${output.stderr}`),
      );
    }, options.timeoutMs);
    const signaller = options.signalAfter
      ? setTimeout(() => child.kill(options.signalAfter!.signal), options.signalAfter.ms)
      : undefined;
    let closed = false;
    options.signalWhen?.ready.then(
      () => {
        if (!closed) child.kill(options.signalWhen!.signal);
      },
      () => {},
    );
    child.on("close", (code) => {
      closed = true;
      clearTimeout(killer);
      if (signaller) clearTimeout(signaller);
      resolve({ code, ...output, elapsedMs: performance.now() - started });
    });
  });
}

/** The one error record on the last stderr line, parsed. */
export function errorRecord(run: CliRun): Record<string, unknown> {
  const lines = run.stderr.trim().split("\n");
  return JSON.parse(lines.at(-1) ?? "") as Record<string, unknown>;
}

/** Whether script(1) is here to give the CLI a pseudo-terminal. */
export const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Runs the built CLI with stdin, stdout and stderr on a pseudo-terminal 200 columns wide, with
 * `input` typed and `env` added (NO_COLOR set); the transcript with CRs and the stage line's
 * erasures dropped, and `exit=STATUS` as its last line.
 */
export function inTerminal(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): string {
  const vars = Object.entries({ NO_COLOR: "1", ...options.env }).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  const quoted = [process.execPath, CLI_BIN, ...args].map((a) => JSON.stringify(a)).join(" ");
  const command = `stty cols 200 2>/dev/null; env ${vars.join(" ")} ${quoted}; echo "exit=$?"`;
  const out = execFileSync("script", ["-qfc", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 30_000,
    input: options.input ?? "",
  });
  const erase = new RegExp(`${String.fromCharCode(27)}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
  return out.replace(/\r/g, "").replace(erase, "");
}
