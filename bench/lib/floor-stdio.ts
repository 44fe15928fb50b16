// The in-process floor for stdio calls: newline-delimited JSON over the child's pipes, an id map,
// nothing else. What the server and the pipes cost on their own.

import { spawn } from "node:child_process";
import type { BenchClient } from "./clients.ts";

export async function floorStdio(command: string, args: readonly string[]): Promise<BenchClient> {
  const child = spawn(command, [...args], { stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map<number, (message: { result?: unknown }) => void>();
  let buffered = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() === "") continue;
      const message = JSON.parse(line) as { id?: number; result?: unknown };
      if (typeof message.id === "number") waiting.get(message.id)?.(message);
      if (typeof message.id === "number") waiting.delete(message.id);
    }
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise<{ result?: unknown }>((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
    });
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "floor", version: "0" },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return {
    listTools: () => request("tools/list", {}),
    callTool: (name, args) => request("tools/call", { name, arguments: args }),
    close: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      const kill = setTimeout(() => child.kill("SIGTERM"), 500);
      await exited;
      clearTimeout(kill);
    },
    version: () => "2025-11-25",
  };
}
