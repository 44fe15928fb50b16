import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

export interface ProcessRun {
  /** Spawn to exit (and stdout's end). */
  ms: number;
  /** Spawn to the first byte on stdout; undefined when nothing was written. */
  firstStdoutMs: number | undefined;
  /**
   * User + system CPU of the process and every child it waited for (a stdio server included),
   * in ms, when asked for and /usr/bin/time is there to report it.
   */
  cpuMs?: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

const TIME = "/usr/bin/time";
const CPU_MARK = "bench-cpu-seconds";

/**
 * Spawns a whole process and times it from spawn to exit, as a shell user would experience it.
 * With `cpu`, the process runs under /usr/bin/time, which reports the CPU of the process and of
 * the children it reaped (so a client's stdio server counts too) on its last stderr line.
 */
export function timeProcess(
  command: string,
  args: readonly string[],
  {
    env,
    timeoutMs = 60_000,
    cpu = false,
  }: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cpu?: boolean } = {},
): Promise<ProcessRun> {
  const timed = cpu && existsSync(TIME);
  const [file, argv] = timed ? [TIME, ["-f", `${CPU_MARK} %U %S`, command, ...args]] : [command, [...args]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"], env: env ?? process.env });
    let stdout = "";
    let stderr = "";
    let firstStdoutMs: number | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      firstStdoutMs ??= performance.now() - started;
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`bench: ${args.join(" ")} ran past ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    // "close": the process has exited and its output is all in.
    child.once("close", (code) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      let cpuMs: number | undefined;
      const mark = timed ? stderr.lastIndexOf(CPU_MARK) : -1;
      if (mark !== -1) {
        const [user, sys] = stderr
          .slice(mark + CPU_MARK.length)
          .trim()
          .split(/\s+/)
          .map(Number);
        cpuMs = ((user ?? Number.NaN) + (sys ?? Number.NaN)) * 1000;
        stderr = stderr.slice(0, mark);
      }
      resolve({ ms, firstStdoutMs, cpuMs, code, stdout, stderr });
    });
  });
}
