import { type ChildProcess, spawn } from "node:child_process";

/**
 * Starts a helper server that prints `{"ready":true,"url":...}` as its first line and exits when
 * its stdin ends; resolves with its URL. `stop()` ends stdin and waits for the exit.
 */
export async function startReadyChild(
  file: string,
  args: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [file, ...args], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      try {
        resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
      } catch (e) {
        reject(e);
      }
    });
    child.once("exit", (code) => reject(new Error(`bench: ${file} exited (${code}) before it was ready`)));
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin!.end();
      const kill = setTimeout(() => child.kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(kill);
    },
  };
}
