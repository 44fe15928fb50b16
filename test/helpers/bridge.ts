// Driving `tether bridge` as a host would: the official TypeScript clients (SDK 1.x and client
// 2.x) spawning the built CLI over stdio, and a raw JSON-lines host for exact wire checks.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Client as V2Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI_BIN } from "./cli.ts";

export const SCRIPTED_SERVER = fileURLToPath(
  new URL("../fixtures/bridge/scripted-server.mjs", import.meta.url),
);

/** `tether bridge` with these arguments, as a host's command line. */
export function bridgeCommand(args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [CLI_BIN, "bridge", ...args] };
}

const INFO = { name: "bridge-test-host", version: "1.0.0" };

/** The official v1 client (1.32.2), legacy handshake, as the host of a stdio bridge. */
export async function v1Host(
  args: string[],
  capabilities: Record<string, object> = {},
): Promise<{ client: V1Client; transport: V1Stdio; stderr: () => string }> {
  const client = new V1Client(INFO, { capabilities });
  let stderr = "";
  const transport = new V1Stdio({ ...bridgeCommand(args), stderr: "pipe" });
  transport.stderr?.on("data", (d) => {
    stderr += d;
  });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** The official v2 client (2.4.0) as the host; `pin` makes it a 2026-07-28 host. */
export async function v2Host(
  args: string[],
  mode: "legacy" | "auto" | { pin: string },
  capabilities: Record<string, object> = {},
): Promise<{ client: V2Client; transport: V2Stdio }> {
  const client = new V2Client(INFO, { capabilities, versionNegotiation: { mode } });
  const transport = new V2Stdio({ ...bridgeCommand(args), stderr: "ignore" });
  await client.connect(transport);
  return { client, transport };
}

type Message = Record<string, unknown> & { id?: string | number; method?: string };

/** A host that writes JSON lines to the bridge and reads them back, for exact wire checks. */
export class RawHost {
  readonly child: ChildProcessWithoutNullStreams;
  readonly received: Message[] = [];
  stderr = "";
  readonly #waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: Record<string, string> = {}) {
    const { command, args: argv } = bridgeCommand(args);
    this.child = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
    this.exited = once(this.child, "exit").then(([code]) => code as number | null);
    let buffer = "";
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const m = JSON.parse(line) as Message;
        this.received.push(m);
        for (const w of [...this.#waiters])
          if (w.match(m)) {
            this.#waiters.splice(this.#waiters.indexOf(w), 1);
            w.resolve(m);
          }
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
  }

  send(message: Message): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  /** The first message (already received or still to come) that matches. */
  next(match: (m: Message) => boolean): Promise<Message> {
    const found = this.received.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  async request(id: string | number, method: string, params: Record<string, unknown> = {}): Promise<Message> {
    this.send({ id, method, params });
    return this.next((m) => m.id === id && m.method === undefined);
  }

  async initialize(
    capabilities: Record<string, object> = {},
    protocolVersion = "2025-06-18",
  ): Promise<Message> {
    const reply = await this.request("init", "initialize", {
      protocolVersion,
      capabilities,
      clientInfo: INFO,
    });
    this.send({ method: "notifications/initialized" });
    return reply;
  }

  /** Closes stdin (the host went away) and waits for the bridge to exit. */
  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

/** The 2026-07-28 `_meta` envelope a modern host puts on every request. */
export function envelope(capabilities: Record<string, object> = {}, extra: Record<string, unknown> = {}) {
  return {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": capabilities,
      "io.modelcontextprotocol/clientInfo": INFO,
      ...extra,
    },
  };
}

/** A `tether bridge --listen` child: its URLs once it listens, and a way to stop it. */
export interface Listener {
  child: ChildProcessWithoutNullStreams;
  mcp: string;
  sse: string;
  stderr: () => string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** Starts `tether bridge --listen ADDRESS ...args` and waits for its `listening` line. */
export async function startListener(
  address: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Listener> {
  const { command, args: argv } = bridgeCommand(["--listen", address, ...args]);
  const child = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl !== -1) resolve(out.slice(0, nl));
    });
    void exited.then((code) => reject(new Error(`the listener exited (${code}): ${stderr}`)));
  });
  const { listening } = JSON.parse(line) as { listening: { mcp: string; sse: string } };
  return {
    child,
    mcp: listening.mcp,
    sse: listening.sse,
    stderr: () => stderr,
    exited,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
