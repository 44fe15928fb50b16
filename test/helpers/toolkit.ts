// The pieces every scripted server and fault test shares, whichever flavour of helper it builds
// on (test/helpers/hostile.ts, test/helpers/deadline-servers.ts): JSON-RPC messages, the opening
// of an event stream, the plumbing of a loopback HTTP server that closes every socket it
// accepted, and the writing of a stdio server script with its log. Each helper module keeps its
// own vocabulary on top of these (and re-exports what its importers use), so one fix here reaches
// every test. Nothing here imports the library: the servers built on it also run as child
// processes and against the packed package.

import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

// ---------------------------------------------------------------- JSON-RPC

export function rpcResult(id: string | number | null | undefined, result: unknown): Record<string, unknown> {
  return { jsonrpc: "2.0", id: id ?? null, result };
}

export function rpcError(
  id: string | number | null | undefined,
  code: number,
  message: string,
  data?: unknown,
): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id: id ?? null,
    error: data === undefined ? { code, message } : { code, message, data },
  };
}

/** A body parsed as JSON; undefined when empty or not JSON. */
export function parseJson(rawBody: string): unknown {
  try {
    return rawBody === "" ? undefined : JSON.parse(rawBody);
  } catch {
    return undefined;
  }
}

/** One request as it reached a recording server, recorded before the handler runs. */
export interface RequestRecord {
  /** HTTP method. */
  method: string;
  /** Path and query, e.g. `/messages?s=1`. */
  path: string;
  /** Lower-cased header names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** `method` of the JSON-RPC message in the body. */
  rpcMethod: string | undefined;
  /** `id` of that message; undefined for notifications and non-JSON bodies. */
  rpcId: string | number | undefined;
  /** `params` of that message. */
  rpcParams: Record<string, unknown> | undefined;
  /** When it arrived (each server says on which clock). */
  at: number;
}

/** The record of `req`, whose body was `rawBody`, carrying the JSON-RPC `message` (an object) in it. */
export function recordOf(
  req: IncomingMessage,
  rawBody: string,
  message: Record<string, unknown> | undefined,
  at: number,
): RequestRecord {
  const params = message?.params;
  return {
    method: req.method ?? "",
    path: req.url ?? "",
    headers: req.headers,
    rawBody,
    rpcMethod: typeof message?.method === "string" ? message.method : undefined,
    rpcId: typeof message?.id === "string" || typeof message?.id === "number" ? message.id : undefined,
    rpcParams:
      typeof params === "object" && params !== null ? (params as Record<string, unknown>) : undefined,
    at,
  };
}

/** The result of the `echo` tool every scripted server offers: its `text` argument, as text. */
export function echoResult(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const args = params?.arguments as { text?: unknown } | undefined;
  return { content: [{ type: "text", text: String(args?.text ?? "") }] };
}

/** A modern `server/discover` result listing these versions, naming the server `name`. */
export function discoverResult(supportedVersions: readonly string[], name: string): Record<string, unknown> {
  return {
    resultType: "complete",
    supportedVersions,
    capabilities: { tools: {} },
    ttlMs: 60_000,
    cacheScope: "server",
    _meta: { "io.modelcontextprotocol/serverInfo": { name, version: "0.0.0" } },
  };
}

// ---------------------------------------------------------------- event streams

/** Opens an event stream: the headers (these after the two every stream has) are flushed at once. */
export function openSse(res: ServerResponse, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
  res.flushHeaders();
}

// ---------------------------------------------------------------- loopback HTTP

/** A recording server as a test sees it. */
export interface RecordingServer<Rec> {
  /** `http://127.0.0.1:<port>` and the path the server was given (default `/mcp`). */
  url: string;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Every request, in arrival order. */
  requests: Rec[];
  /** Destroys every open socket and stops listening; idempotent. */
  close(): Promise<void>;
}

export interface Listening {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The sockets accepted and not yet closed. */
  sockets: ReadonlySet<Socket>;
  /** Destroys every open socket and stops listening; idempotent. */
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1, port 0, handing every request to `onRequest`; `onSocket` sees each
 * connection as it is accepted. `close()` destroys every socket, so a response left hanging on
 * purpose never keeps a test alive.
 */
export async function listenLoopback(
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
  onSocket: (socket: Socket) => void = () => {},
): Promise<Listening> {
  const sockets = new Set<Socket>();
  const server = createServer(onRequest);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  let closing: Promise<void> | undefined;
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------- stdio scripts

/**
 * What every stdio script's prelude starts with: `process.argv[2]` is the log file (`LOG`, also
 * `LOG_FILE`), `log(entry)` appends one line to it with the process's pid, `send(message)` writes
 * one JSON-RPC line to stdout.
 */
export const PRELUDE_HEAD = `
import { appendFileSync } from "node:fs";
const LOG = process.argv[2];
const LOG_FILE = LOG;
const log = (entry) => appendFileSync(LOG, JSON.stringify({ pid: process.pid, ...entry }) + "\\n");
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
`;

/** How a test runs a stdio server script and reads what its processes logged. */
export interface ScriptedStdio<Entry> {
  command: string;
  args: string[];
  /** Everything the script's processes logged, in order. */
  log(): Entry[];
  /** The pids of every process started from the script, in start order. */
  pids(): number[];
  /** The methods one process received, in order. */
  received(pid: number): string[];
  dispose(): void;
}

/** A stdio server script written to a temporary folder, run as `node <file> <logFile>`. */
export interface WrittenScript<Entry extends { pid: number; event: string }> {
  command: string;
  args: string[];
  dir: string;
  file: string;
  logFile: string;
  /** Everything the script's processes logged (one JSON object a line), in order. */
  log(): Entry[];
  /** The pids of every process started from the script, in start order. */
  pids(): number[];
}

/**
 * Writes `prelude` then `source` as `server.mjs` in a fresh temporary folder named after `prefix`,
 * beside an empty log file the prelude appends to (its path is the script's first argument).
 */
export function writeStdioScript<Entry extends { pid: number; event: string }>(
  prefix: string,
  prelude: string,
  source: string,
): WrittenScript<Entry> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, "server.mjs");
  const logFile = join(dir, "log.jsonl");
  writeFileSync(file, `${prelude}\n${source}\n`);
  writeFileSync(logFile, "");
  const log = (): Entry[] =>
    readFileSync(logFile, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Entry);
  return {
    command: process.execPath,
    args: [file, logFile],
    dir,
    file,
    logFile,
    log,
    pids: () => log().flatMap((e) => (e.event === "start" ? [e.pid] : [])),
  };
}

/** Removes a script's temporary folder. */
export function removeScript(script: { dir: string }): void {
  rmSync(script.dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- child processes

/** Whether a process exists (signal 0: no signal is sent, only the check). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Everything a child has written so far to stdout and to stderr, as UTF-8 text. */
export function outputOf(child: ChildProcess): { readonly stdout: string; readonly stderr: string } {
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    output.stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    output.stderr += d;
  });
  return output;
}

// ---------------------------------------------------------------- ownership

/** Something a test opened: a server to close, or a script to dispose. */
export type Closable = { close(): Promise<void> | void } | { dispose(): void };

/**
 * What a test file opens, kept to be closed together at its end (call `closeAll` in `after`),
 * even when an assertion failed first. `keep(x)` returns `x`.
 */
export function keeper(): { keep<T extends Closable>(x: T): T; closeAll(): Promise<void> } {
  const kept: Closable[] = [];
  return {
    keep(x) {
      kept.push(x);
      return x;
    },
    async closeAll() {
      await Promise.all(kept.splice(0).map(async (x) => ("close" in x ? x.close() : x.dispose())));
    },
  };
}
