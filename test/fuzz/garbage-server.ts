// A stdio MCP server (no SDK) whose every answer comes from a plan file that the property rewrites
// before each run, so one script serves every generated behaviour. For each method the plan holds
// a list of reply bodies ({ result } or { error }, maybe with stray fields); the n-th request of a
// method gets the n-th body (the last one once the list runs out). A string "__DEEP__" anywhere in
// a body is replaced on the wire by arrays nested 100k deep, which JSON.stringify could not write.
// It logs every reply that has fields beside its result (`error`, `method`): a line a client may
// skip as no JSON-RPC response, and then wait out its limit for, which a test on a fake clock
// moves time for.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type StdioScript, startStdioScript } from "../helpers/hostile.ts";
import { isAlive } from "../helpers/toolkit.ts";

export const DEEP_MARK = "__DEEP__";
export const DEEP_LEVELS = 100_000;

export type ReplyBody = Record<string, unknown>;
export type Plan = Partial<
  Record<"server/discover" | "initialize" | "tools/list" | "tools/call", ReplyBody[]>
>;

const SOURCE = `
import { readFileSync } from "node:fs";
const plan = JSON.parse(readFileSync(process.argv[3], "utf8"));
const DEEP = "[".repeat(${DEEP_LEVELS}) + "]".repeat(${DEEP_LEVELS});
const counts = new Map();
onMessage((m) => {
  if (typeof m.method !== "string" || m.id === undefined) return;
  if (m.method === "ping") return send({ jsonrpc: "2.0", id: m.id, result: {} });
  const n = (counts.get(m.method) ?? 0) + 1;
  counts.set(m.method, n);
  const bodies = plan[m.method];
  if (!Array.isArray(bodies) || bodies.length === 0)
    return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  const body = bodies[Math.min(n, bodies.length) - 1];
  const text = JSON.stringify({ jsonrpc: "2.0", id: m.id, ...body }).split(${JSON.stringify(JSON.stringify(DEEP_MARK))}).join(DEEP);
  process.stdout.write(text + "\\n");
  if ("result" in body && ("error" in body || "method" in body)) log({ event: "stray", method: m.method });
});
`;

export interface GarbageServer {
  command: string;
  /** Arguments for one run: the script, its log, and the plan file. */
  args: string[];
  /** Replaces the plan the next process started will read. */
  setPlan(plan: Plan): void;
  /** Replies written so far, by every process, with fields beside their result (see above). */
  strays(): number;
  /**
   * SIGKILLs every process started from the script that is still running. For a run whose client
   * never settled: nothing else would stop its server, which would keep the test process alive.
   */
  killAll(): number;
  dispose(): void;
}

export function garbageServer(): GarbageServer {
  const script: StdioScript = startStdioScript(SOURCE);
  const logFile = script.args[1]!;
  const planFile = join(logFile, "..", "plan.json");
  writeFileSync(planFile, "{}");
  return {
    command: script.command,
    args: [...script.args, planFile],
    setPlan: (plan) => writeFileSync(planFile, JSON.stringify(plan)),
    // Counted in the raw text: the log is read while processes append to it, so its last line
    // may be half written.
    strays: () => readFileSync(logFile, "utf8").split('"event":"stray"').length - 1,
    killAll: () => {
      let killed = 0;
      for (const pid of script.pids()) {
        if (!isAlive(pid)) continue;
        process.kill(pid, "SIGKILL");
        killed++;
      }
      return killed;
    },
    dispose: () => script.dispose(),
  };
}
