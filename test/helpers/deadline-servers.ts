// Loopback servers and stdio scripts for the deadline, ownership and events fault tests: small,
// scripted, and each one closes everything it opened. HTTP servers listen on 127.0.0.1, port 0;
// stdio scripts are written to a temporary folder and log every process they start (its pid) and
// every message it receives, so tests can count processes and check that they are gone.
// `fixtureSet()` opens both for a test file and closes them in one `after`. The plumbing it shares
// with hostile.ts lives in toolkit.ts; timed/tetherErrorOf come from failures.ts.

import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { PassThrough } from "node:stream";
import type { LifecycleEvent } from "../../src/index.ts";
import {
  discoverResult,
  echoResult,
  keeper,
  listenLoopback,
  openSse,
  PRELUDE_HEAD,
  parseJson,
  type RecordingServer,
  type RequestRecord,
  recordOf,
  removeScript,
  rpcError,
  rpcResult,
  type ScriptedStdio,
  writeStdioScript,
} from "./toolkit.ts";

export { type Settled, tetherErrorOf, timed } from "./failures.ts";
export { rpcError, rpcResult } from "./toolkit.ts";

// ---------------------------------------------------------------- timing

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 20 ms until it holds or `withinMs` passes; resolves whether it held. */
export async function eventually(check: () => boolean, withinMs: number): Promise<boolean> {
  const until = performance.now() + withinMs;
  while (!check()) {
    if (performance.now() > until) return false;
    await delay(20);
  }
  return true;
}

// ---------------------------------------------------------------- events

/** Collects lifecycle events with the wall time they arrived at. */
export function eventLog(): {
  events: LifecycleEvent[];
  onEvent: (e: LifecycleEvent) => void;
  types: () => string[];
} {
  const events: LifecycleEvent[] = [];
  return {
    events,
    onEvent: (e) => events.push(e),
    types: () =>
      events.map((e) => (e.type.startsWith("stage_") && "stage" in e ? `${e.type}:${e.stage}` : e.type)),
  };
}

// ---------------------------------------------------------------- processes

export { isAlive } from "./toolkit.ts";

export function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

// ---------------------------------------------------------------- HTTP

/** A request as it arrived; `at` is on the performance.now() clock. */
export type Rec = RequestRecord;

export type Handler = (rec: Rec, res: ServerResponse, req: IncomingMessage) => void;

export interface Loopback extends RecordingServer<Rec> {
  /** Requests currently open (the response not yet finished nor its connection closed). */
  openRequests(): number;
  /** Requests of this HTTP method, or (for POST) carrying this JSON-RPC method. */
  count(what: string): number;
  /** Connections the server has accepted so far, and how many of them are still open. */
  connections(): { accepted: number; open: number };
  /** Resolves once every connection the server accepted has closed. */
  allClosed(): Promise<void>;
}

/** A recording HTTP server on 127.0.0.1, port 0; `close()` destroys every socket, so hangs end. */
export async function loopback(handler: Handler, path = "/mcp"): Promise<Loopback> {
  const requests: Rec[] = [];
  let open = 0;
  let accepted = 0;
  const idle: (() => void)[] = [];
  const listening = await listenLoopback(
    (req, res) => {
      open++;
      let settled = false;
      const done = () => {
        if (!settled) {
          settled = true;
          open--;
        }
      };
      res.once("finish", done);
      res.once("close", done);
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const rawBody = Buffer.concat(chunks).toString("utf8");
        const parsed = parseJson(rawBody);
        const body =
          typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
            ? (parsed as Record<string, unknown>)
            : undefined;
        const rec = recordOf(req, rawBody, body, performance.now());
        requests.push(rec);
        try {
          handler(rec, res, req);
        } catch {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        }
      });
    },
    (s) => {
      accepted++;
      s.once("close", () => {
        if (listening.sockets.size === 0) for (const wake of idle.splice(0)) wake();
      });
    },
  );
  const { origin, sockets } = listening;
  return {
    url: `${origin}${path}`,
    origin,
    requests,
    openRequests: () => open,
    connections: () => ({ accepted, open: sockets.size }),
    allClosed: () =>
      sockets.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve)),
    count: (what) =>
      requests.filter((r) => r.rpcMethod === what || (r.rpcMethod === undefined && r.method === what)).length,
    close: () => listening.close(),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export function openEventStream(res: ServerResponse): void {
  openSse(res);
}

export const SESSION_ID = "deadline-session-7f3a";
export const ECHO_TOOL = {
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
};

/** How a scripted legacy Streamable HTTP server treats one kind of request. */
export type Behaviour =
  | "answer"
  /** Headers never sent. */
  | "hang"
  /** Headers sent (an event stream), the reply never. */
  | "hang-sse"
  | "http-400"
  | "http-500"
  | "rpc-32601";

export interface LegacyHttpOptions {
  /** `server/discover` (default: HTTP 400 text/plain, as legacy SDK servers answer a request without a session). */
  discover?: Behaviour;
  /** `initialize` (default: answered, with a session id). */
  initialize?: Behaviour;
  /** The version `initialize` is answered with (default: the one asked for). */
  version?: string;
  /** `notifications/initialized` (default 202). */
  initialized?: Behaviour;
  /** `tools/list` (default: one tool, `echo`). */
  toolsList?: Behaviour;
  /** DELETE (default 200). */
  delete?: Behaviour;
  sessionId?: string;
  /** Called as each request arrives, before it is answered. */
  onRequest?: (rec: Rec) => void;
}

function misbehave(b: Behaviour, rec: Rec, res: ServerResponse): boolean {
  switch (b) {
    case "answer":
      return false;
    case "hang":
      return true;
    case "hang-sse":
      openEventStream(res);
      return true;
    case "http-400":
      res.writeHead(400, { "content-type": "text/plain" }).end("Bad Request: no session");
      return true;
    case "http-500":
      res.writeHead(500, { "content-type": "text/plain" }).end("boom");
      return true;
    case "rpc-32601":
      sendJson(res, 200, rpcError(rec.rpcId, -32601, "Method not found"));
      return true;
  }
}

/** A legacy (2025-11-25) Streamable HTTP server whose answers to each stage are scripted. */
export function legacyHttp(o: LegacyHttpOptions = {}): Handler {
  const sessionId = o.sessionId ?? SESSION_ID;
  return (rec, res) => {
    o.onRequest?.(rec);
    if (rec.method === "GET") return void res.writeHead(405, { allow: "POST, DELETE" }).end();
    if (rec.method === "DELETE") {
      if (misbehave(o.delete ?? "answer", rec, res)) return;
      return void res.writeHead(200).end();
    }
    if (rec.rpcMethod === "server/discover") {
      if (misbehave(o.discover ?? "http-400", rec, res)) return;
      return void sendJson(res, 200, rpcError(rec.rpcId, -32601, "Method not found"));
    }
    if (rec.rpcMethod === "initialize") {
      if (misbehave(o.initialize ?? "answer", rec, res)) return;
      const asked = rec.rpcParams?.protocolVersion;
      return void sendJson(
        res,
        200,
        rpcResult(rec.rpcId, {
          protocolVersion: o.version ?? (typeof asked === "string" ? asked : "2025-11-25"),
          capabilities: { tools: {} },
          serverInfo: { name: "deadline-legacy", version: "0.0.0" },
        }),
        { "mcp-session-id": sessionId },
      );
    }
    if (rec.rpcId === undefined) {
      if (rec.rpcMethod === "notifications/initialized" && misbehave(o.initialized ?? "answer", rec, res))
        return;
      return void res.writeHead(202).end();
    }
    if (rec.rpcMethod === "tools/list") {
      if (misbehave(o.toolsList ?? "answer", rec, res)) return;
      return void sendJson(res, 200, rpcResult(rec.rpcId, { tools: [ECHO_TOOL] }));
    }
    if (rec.rpcMethod === "tools/call")
      return void sendJson(res, 200, rpcResult(rec.rpcId, echoResult(rec.rpcParams)));
    sendJson(res, 200, rpcError(rec.rpcId, -32601, "Method not found"));
  };
}

export const MODERN = "2026-07-28";

/** A minimal modern (2026-07-28) stateless Streamable HTTP server. */
export function modernHttp(o: { discover?: Behaviour } = {}): Handler {
  return (rec, res) => {
    if (rec.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    if (rec.rpcId === undefined) return void res.writeHead(202).end();
    const meta = rec.rpcParams?._meta as Record<string, unknown> | undefined;
    if (meta?.["io.modelcontextprotocol/protocolVersion"] !== MODERN) {
      return void sendJson(
        res,
        400,
        rpcError(rec.rpcId, -32022, "Unsupported protocol version", { supported: [MODERN], requested: null }),
      );
    }
    if (rec.rpcMethod === "server/discover") {
      if (misbehave(o.discover ?? "answer", rec, res)) return;
      return void sendJson(res, 200, rpcResult(rec.rpcId, discoverResult([MODERN], "deadline-modern")));
    }
    if (rec.rpcMethod === "tools/list")
      return void sendJson(res, 200, rpcResult(rec.rpcId, { resultType: "complete", tools: [ECHO_TOOL] }));
    sendJson(res, 200, rpcError(rec.rpcId, -32601, "Method not found"));
  };
}

/** What the GET of a 2024-11-05 HTTP+SSE server does before (or instead of) its endpoint event. */
export type SseOpening =
  | { kind: "no-headers" }
  /** Headers sent, then only comments: no event ever. */
  | { kind: "silent" }
  /** Headers sent, then the stream ends without an event. */
  | { kind: "end" }
  /** Headers sent, then this endpoint event's data, verbatim (the stream stays open). */
  | { kind: "endpoint"; data: string }
  /** A correct server; `initialize` is answered with `initialize` (default "answer"). */
  | { kind: "working"; initialize?: "answer" | "silent" };

/** A 2024-11-05 HTTP+SSE server mounted at /sse; the endpoint it names is /messages. */
export function legacySse(opening: SseOpening): Handler {
  const streams: ServerResponse[] = [];
  return (rec, res) => {
    const url = new URL(rec.path, "http://127.0.0.1");
    if (url.pathname === "/sse" && rec.method === "GET") {
      if (opening.kind === "no-headers") return;
      openEventStream(res);
      if (opening.kind === "silent") {
        res.write(": waiting\n\n");
        return;
      }
      if (opening.kind === "end") return void res.end(": bye\n\n");
      if (opening.kind === "endpoint") return void res.write(`event: endpoint\ndata: ${opening.data}\n\n`);
      streams.push(res);
      res.write("event: endpoint\ndata: /messages?s=1\n\n");
      return;
    }
    if (url.pathname === "/messages" && rec.method === "POST" && opening.kind === "working") {
      res.writeHead(202).end();
      const stream = streams.at(-1);
      if (!stream || rec.rpcId === undefined) return;
      if (rec.rpcMethod === "initialize" && opening.initialize === "silent") return;
      const reply =
        rec.rpcMethod === "initialize"
          ? rpcResult(rec.rpcId, {
              protocolVersion: "2024-11-05",
              capabilities: { tools: {} },
              serverInfo: { name: "deadline-sse", version: "0.0.0" },
            })
          : rpcError(rec.rpcId, -32601, "Method not found");
      stream.write(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  };
}

// ---------------------------------------------------------------- stdio scripts

export interface StdioLogEntry {
  pid: number;
  event: "start" | "recv";
  method?: string;
}

export interface StdioScript extends ScriptedStdio<StdioLogEntry> {
  /** The script file (for scripts run elsewhere, e.g. in a child). */
  file: string;
  logFile: string;
  /** Kills any process still alive and removes the folder. */
  dispose(): void;
}

/**
 * The prelude of every script: it logs its pid on start and every message's method as it arrives
 * (synchronously, before the script reacts). `onMessage(fn)` reads lines; with `exitOnEnd` (default)
 * the process exits when its stdin ends, as a well-behaved server does.
 */
const PRELUDE = `${PRELUDE_HEAD}
let buffered = "";
const handlers = [];
const onMessage = (fn) => handlers.push(fn);
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\\n")) !== -1) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    let m;
    try { m = JSON.parse(line); } catch { continue; }
    log({ event: "recv", method: m.method });
    for (const fn of handlers) fn(m);
  }
});
log({ event: "start" });
`;

/** Writes a stdio server script (prelude + `source`) to a temporary folder. */
export function stdioScript(source: string): StdioScript {
  const written = writeStdioScript<StdioLogEntry>("tether-deadline-", PRELUDE, source);
  const { log, pids } = written;
  return {
    command: written.command,
    args: written.args,
    file: written.file,
    logFile: written.logFile,
    log,
    pids,
    received: (pid) =>
      log().flatMap((e) => (e.pid === pid && e.event === "recv" && e.method ? [e.method] : [])),
    dispose() {
      for (const pid of pids()) killQuietly(pid);
      removeScript(written);
    },
  };
}

/** Never answers anything; exits when its stdin ends. */
export const SILENT = `process.stdin.on("end", () => process.exit(0));`;

/** Never answers anything and ignores the end of its stdin (it stays alive); SIGTERM still ends it. */
export const SILENT_IGNORES_STDIN_END = `setInterval(() => {}, 1000);`;

/** Never answers, ignores the end of its stdin and ignores SIGTERM: only SIGKILL ends it. */
export const STUBBORN = `process.on("SIGTERM", () => log({ event: "sigterm" })); setInterval(() => {}, 1000);`;

/**
 * A legacy stdio server: the probe gets -32601 (or silence with `probe: "silent"`), `initialize`
 * is answered (or not, with `initialize: "silent"`; or refused with -32603, `"error"`), then tools/list and
 * tools/call work. With
 * `echoEnv`, every error message carries that environment variable's value.
 */
export function legacyStdio(
  o: {
    probe?: "rpc-32601" | "silent";
    initialize?: "answer" | "silent" | "error";
    echoEnv?: string;
    ignoreStdinEnd?: boolean;
  } = {},
): string {
  return `
const o = ${JSON.stringify(o)};
const secret = o.echoEnv ? " " + process.env[o.echoEnv] : "";
if (!o.ignoreStdinEnd) process.stdin.on("end", () => process.exit(0));
else setInterval(() => {}, 1000);
let ready = false;
onMessage((m) => {
  if (m.id === undefined || typeof m.method !== "string") return;
  const reply = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  const fail = (code, message) => send({ jsonrpc: "2.0", id: m.id, error: { code, message: message + secret } });
  if (m.method === "initialize") {
    if (o.initialize === "silent") return;
    if (o.initialize === "error") {
      process.stderr.write("initialize refused" + secret + "\\n");
      return fail(-32603, "Initialization failed");
    }
    ready = true;
    return reply({ protocolVersion: m.params?.protocolVersion ?? "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "deadline-stdio", version: "0.0.0" } });
  }
  if (!ready) {
    if (o.probe === "silent") return;
    return fail(-32601, "Method not found");
  }
  if (m.method === "tools/list") return reply({ tools: [${JSON.stringify(ECHO_TOOL)}] });
  if (m.method === "tools/call") return reply({ content: [{ type: "text", text: String(m.params?.arguments?.text ?? "") }] });
  return fail(-32601, "Method not found");
});
`;
}

// ---------------------------------------------------------------- ownership

/**
 * Loopback servers and stdio scripts for one test file: `serve` and `script` open them, and
 * `closeAll` (for `after`) closes every server and disposes every script, whatever failed first.
 */
export function fixtureSet(): {
  serve(...args: Parameters<typeof loopback>): Promise<Loopback>;
  script(source: string): StdioScript;
  closeAll(): Promise<void>;
} {
  const { keep, closeAll } = keeper();
  return {
    serve: async (...args) => keep(await loopback(...args)),
    script: (source) => keep(stdioScript(source)),
    closeAll,
  };
}

// ---------------------------------------------------------------- spawn seams

/**
 * A `deps.spawn` whose child never reports `spawn` (nor anything else): establishment sits in the
 * spawn stage until cancelled. The fake has no pid, so there is nothing to signal.
 */
export function neverSpawns(): { spawn: typeof spawn; calls: () => number } {
  let calls = 0;
  const fake = (() => {
    calls++;
    const child = Object.assign(new EventEmitter(), {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: null,
      pid: undefined,
      exitCode: null,
      signalCode: null,
      kill: () => true,
    });
    return child;
  }) as unknown as typeof spawn;
  return { spawn: fake, calls: () => calls };
}

/** A `deps.spawn` that spawns for real and remembers each child's pid (known even before it runs any code). */
export function recordingSpawn(): { spawn: typeof spawn; pids: number[] } {
  const pids: number[] = [];
  const recording = ((...args: Parameters<typeof spawn>) => {
    const child = spawn(...args);
    if (child.pid !== undefined) pids.push(child.pid);
    return child;
  }) as typeof spawn;
  return { spawn: recording, pids };
}
