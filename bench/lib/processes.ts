import { spawn } from "node:child_process";

export interface ProcessRun {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Spawns a whole process and times it from spawn to exit, as a shell user would experience it. */
export function timeProcess(
  command: string,
  args: readonly string[],
  { env, timeoutMs = 60_000 }: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, [...args], { stdio: ["ignore", "pipe", "pipe"], env: env ?? process.env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
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
      resolve({ ms: performance.now() - started, code, stdout, stderr });
    });
  });
}
