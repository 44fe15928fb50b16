// Scripted hostile servers for fault tests: HTTP servers on 127.0.0.1 (port 0) that record every
// request before a test-supplied handler answers it, canned responders (JSON, empty, text, SSE,
// hang, destroy), minimal correct legacy servers to misbehave from, stdio server scripts written
// from a source string, and a launcher for the example servers with extra flags.
//
// Everything here closes what it opened: `close()` destroys open sockets, so a hanging responder
// never keeps a test alive, and `hostileSet()` closes a test file's clients, servers and scripts in
// one `after`. The plumbing it shares with deadline-servers.ts (JSON-RPC messages, the loopback
// server, stdio script files) lives in toolkit.ts.

import { type ChildProcess, spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isAbsolute } from "node:path";
import * as kit from "./toolkit.ts";
import { rpcError, rpcResult } from "./toolkit.ts";

export { rpcError, rpcResult } from "./toolkit.ts";

// ---------------------------------------------------------------- HTTP

/** One request as it reached the server, recorded before the handler runs; `at` is ms since the server started. */
export interface Recorded extends kit.RequestRecord {
  /** The body parsed as JSON; undefined when empty or not JSON. */
  body: unknown;
}

/** Answers one recorded request. May leave the response open on purpose (hang, SSE streams). */
export type Handler = (res: ServerResponse, rec: Recorded, req: IncomingMessage) => void | Promise<void>;

export interface HostileServer extends kit.RecordingServer<Recorded> {
  /** Requests whose body was JSON-RPC, by method, in order. */
  rpcMethods(): string[];
}

function firstMessage(body: unknown): Record<string, unknown> | undefined {
  const m = Array.isArray(body) ? body[0] : body;
  return typeof m === "object" && m !== null ? (m as Record<string, unknown>) : undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts an HTTP server on 127.0.0.1, port 0, that records then hands every request to `handler`. */
export async function startHttp(handler: Handler, options: { path?: string } = {}): Promise<HostileServer> {
  const started = performance.now();
  const requests: Recorded[] = [];
  const listening = await kit.listenLoopback((req, res) => {
    void (async () => {
      const rawBody = await readBody(req);
      const body = kit.parseJson(rawBody);
      const rec: Recorded = {
        ...kit.recordOf(req, rawBody, firstMessage(body), performance.now() - started),
        body,
      };
      requests.push(rec);
      await handler(res, rec, req);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("hostile server: handler failed");
    });
  });
  const { origin } = listening;
  return {
    url: `${origin}${options.path ?? "/mcp"}`,
    origin,
    requests,
    rpcMethods: () => requests.flatMap((r) => (r.rpcMethod ? [r.rpcMethod] : [])),
    close: () => listening.close(),
  };
}

// ---------------------------------------------------------------- responders

/** A value, or a function of the request that computes it (to echo the JSON-RPC id, say). */
export type PerRequest<T> = T | ((rec: Recorded) => T);

function resolve<T>(value: PerRequest<T>, rec: Recorded): T {
  return typeof value === "function" ? (value as (rec: Recorded) => T)(rec) : value;
}

/** Anything JSON.stringify turns into a JSON text. */
export type JsonBody = Record<string, unknown> | unknown[] | string | number | boolean | null;

/** A JSON body (serialised with JSON.stringify) with any status and content type. */
export function json(
  status: number,
  body: PerRequest<JsonBody>,
  options: { contentType?: string; headers?: Record<string, string> } = {},
): Handler {
  return (res, rec) => {
    res.writeHead(status, {
      "content-type": options.contentType ?? "application/json",
      ...options.headers,
    });
    res.end(JSON.stringify(resolve(body, rec)));
  };
}

/** A status with no body at all. */
export function empty(status: number, headers: Record<string, string> = {}): Handler {
  return (res) => {
    res.writeHead(status, headers);
    res.end();
  };
}

/** A text/plain body (or another content type). */
export function text(status: number, body: string, contentType = "text/plain"): Handler {
  return (res) => {
    res.writeHead(status, { "content-type": contentType });
    res.end(body);
  };
}

export interface SseEvent {
  event?: string;
  id?: string;
  /** A string is sent as is (split on newlines into data lines); anything else as JSON. */
  data?: unknown;
  retry?: number;
}

/** Writes one SSE event to an open event-stream response. */
export function writeSse(res: ServerResponse, e: SseEvent): void {
  let frame = "";
  if (e.event !== undefined) frame += `event: ${e.event}\n`;
  if (e.id !== undefined) frame += `id: ${e.id}\n`;
  if (e.retry !== undefined) frame += `retry: ${e.retry}\n`;
  if (e.data !== undefined) {
    const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
    for (const line of data.split("\n")) frame += `data: ${line}\n`;
  }
  res.write(`${frame}\n`);
}

/** Opens an event stream (headers flushed). */
export function openSse(res: ServerResponse, status = 200, headers: Record<string, string> = {}): void {
  kit.openSse(res, status, { connection: "keep-alive", ...headers });
}

/** An event-stream reply: these events, then the stream ends (or stays open with `keepOpen`). */
export function sse(
  events: PerRequest<SseEvent[]>,
  options: { status?: number; keepOpen?: boolean; headers?: Record<string, string> } = {},
): Handler {
  return (res, rec) => {
    openSse(res, options.status, options.headers);
    for (const e of resolve(events, rec)) writeSse(res, e);
    if (!options.keepOpen) res.end();
  };
}

/** Never answers: the response stays open until the client gives up or the server closes. */
export function hang(): Handler {
  return () => {};
}

/** Destroys the socket without a response. */
export function destroy(): Handler {
  return (res) => {
    res.socket?.destroy();
  };
}

// ---------------------------------------------------------------- legacy Streamable HTTP

export const LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const;
export const HOSTILE_SESSION_ID = "hostile-session-1";

export const ECHO_TOOL = {
  name: "echo",
  description: "Echoes its text argument.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
} as const;

/** The version a correct legacy server answers `initialize` with: ours if it knows it, else its newest. */
export function legacyAnswerTo(rec: Recorded): string {
  const requested = rec.rpcParams?.protocolVersion;
  return typeof requested === "string" && (LEGACY_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : "2025-11-25";
}

function echoResult(rec: Recorded): Record<string, unknown> {
  return kit.echoResult(rec.rpcParams);
}

/**
 * A correct legacy server's answer to `initialize`: our version if it knows it (legacyAnswerTo),
 * tools, the server named `name`, and the session `sessionId` in `Mcp-Session-Id`.
 */
export function legacyInitialize(name: string, sessionId: string): Handler {
  return (res, rec, req) =>
    json(
      200,
      rpcResult(rec.rpcId, {
        protocolVersion: legacyAnswerTo(rec),
        capabilities: { tools: {} },
        serverInfo: { name, version: "0.0.0" },
      }),
      { headers: { "mcp-session-id": sessionId } },
    )(res, rec, req);
}

/**
 * Misbehaviours keyed by JSON-RPC method (`server/discover`, `initialize`, `tools/list`, ...) or
 * by HTTP method for requests without a JSON-RPC body (`GET`, `DELETE`).
 */
export type Overrides = Partial<Record<string, Handler>>;

function overrideFor(overrides: Overrides, rec: Recorded): Handler | undefined {
  if (rec.rpcMethod !== undefined) return overrides[rec.rpcMethod];
  return overrides[rec.method];
}

/**
 * A correct, minimal legacy Streamable HTTP server: `initialize` answered in JSON with an
 * `Mcp-Session-Id`; notifications (and client responses) get 202; `tools/list` lists `echo`;
 * `tools/call` echoes; a request without the session (like `server/discover`) gets 400 with a
 * JSON-RPC -32000 body, as the reference SDK answers; GET 405; DELETE 200.
 */
export function legacyStreamableHandler(overrides: Overrides = {}): Handler {
  return async (res, rec, req) => {
    const override = overrideFor(overrides, rec);
    if (override) return await override(res, rec, req);
    if (rec.method === "GET") return empty(405, { allow: "POST, DELETE" })(res, rec, req);
    if (rec.method === "DELETE") return empty(200)(res, rec, req);
    if (rec.method !== "POST" || firstMessage(rec.body) === undefined)
      return json(400, rpcError(null, -32700, "Parse error"))(res, rec, req);
    if (rec.rpcId === undefined) return empty(202)(res, rec, req);
    if (rec.rpcMethod === "initialize")
      return legacyInitialize("hostile-legacy", HOSTILE_SESSION_ID)(res, rec, req);
    if (rec.headers["mcp-session-id"] !== HOSTILE_SESSION_ID)
      return json(400, rpcError(null, -32000, "Bad Request: No valid session ID provided"))(res, rec, req);
    if (rec.rpcMethod === "tools/list")
      return json(200, rpcResult(rec.rpcId, { tools: [ECHO_TOOL] }))(res, rec, req);
    if (rec.rpcMethod === "tools/call")
      return json(200, rpcResult(rec.rpcId, echoResult(rec)))(res, rec, req);
    if (rec.rpcMethod === "ping") return json(200, rpcResult(rec.rpcId, {}))(res, rec, req);
    return json(200, rpcError(rec.rpcId, -32601, "Method not found"))(res, rec, req);
  };
}

// ---------------------------------------------------------------- modern Streamable HTTP

export const MODERN_VERSION = "2026-07-28";

/** A `server/discover` result listing these versions. */
export function discoverResult(supportedVersions: readonly string[]): Record<string, unknown> {
  return kit.discoverResult(supportedVersions, "hostile-modern");
}

/**
 * A correct, minimal modern (2026-07-28) stateless server: a request without the `_meta`
 * envelope (like `initialize`) gets HTTP 400 with -32022 and `data.supported`; `server/discover`
 * lists 2026-07-28; `tools/list` and `tools/call` (echo) answer; GET and DELETE 405.
 */
export function modernStreamableHandler(overrides: Overrides = {}): Handler {
  return async (res, rec, req) => {
    const override = overrideFor(overrides, rec);
    if (override) return await override(res, rec, req);
    if (rec.method !== "POST") return empty(405, { allow: "POST" })(res, rec, req);
    if (rec.rpcId === undefined) return empty(202)(res, rec, req);
    const meta = rec.rpcParams?._meta as Record<string, unknown> | undefined;
    const requested = meta?.["io.modelcontextprotocol/protocolVersion"];
    if (requested !== MODERN_VERSION) {
      return json(
        400,
        rpcError(rec.rpcId, -32022, "Unsupported protocol version", {
          supported: [MODERN_VERSION],
          requested: typeof requested === "string" ? requested : null,
        }),
      )(res, rec, req);
    }
    const complete = (result: Record<string, unknown>) =>
      json(200, rpcResult(rec.rpcId, { resultType: "complete", ...result }))(res, rec, req);
    if (rec.rpcMethod === "server/discover")
      return json(200, rpcResult(rec.rpcId, discoverResult([MODERN_VERSION])))(res, rec, req);
    if (rec.rpcMethod === "tools/list") return complete({ tools: [ECHO_TOOL] });
    if (rec.rpcMethod === "tools/call") return complete(echoResult(rec));
    return json(404, rpcError(rec.rpcId, -32601, "Method not found"))(res, rec, req);
  };
}

// ---------------------------------------------------------------- legacy HTTP+SSE (2024-11-05)

export interface LegacySseOptions {
  /** What a POST to the stream URL itself gets (a Streamable HTTP probe). Default: 405 text/plain. */
  post?: Handler;
  /** Misbehaviours for messages POSTed to the endpoint, keyed by JSON-RPC method. */
  overrides?: Partial<Record<string, (rec: Recorded) => unknown>>;
  /** The version `initialize` is answered with (default 2024-11-05). */
  version?: string;
}

/**
 * A minimal 2024-11-05 HTTP+SSE server, mounted with `startHttp(handler, { path: "/sse" })`:
 * GET /sse opens a stream whose first event is `endpoint` = `/messages?s=<n>`; a POST there gets
 * 202 and its reply arrives as a `message` event on that stream. Other GETs and paths get 404.
 */
export function legacySseHandler(options: LegacySseOptions = {}): Handler {
  const streams = new Map<string, ServerResponse>();
  let next = 1;
  const post = options.post ?? text(405, "Method Not Allowed");
  return async (res, rec, req) => {
    const url = new URL(rec.path, "http://127.0.0.1");
    if (url.pathname === "/sse") {
      if (rec.method === "POST") return await post(res, rec, req);
      if (rec.method !== "GET") return text(405, "Method Not Allowed")(res, rec, req);
      const s = String(next++);
      streams.set(s, res);
      res.once("close", () => streams.delete(s));
      openSse(res);
      writeSse(res, { event: "endpoint", data: `/messages?s=${s}` });
      return;
    }
    if (url.pathname === "/messages" && rec.method === "POST") {
      const stream = streams.get(url.searchParams.get("s") ?? "");
      if (!stream) return text(404, "Unknown session")(res, rec, req);
      empty(202)(res, rec, req);
      if (rec.rpcId === undefined) return;
      const custom = rec.rpcMethod !== undefined ? options.overrides?.[rec.rpcMethod] : undefined;
      let reply: unknown;
      if (custom) reply = custom(rec);
      else if (rec.rpcMethod === "initialize")
        reply = rpcResult(rec.rpcId, {
          protocolVersion: options.version ?? "2024-11-05",
          capabilities: { tools: {} },
          serverInfo: { name: "hostile-sse", version: "0.0.0" },
        });
      else if (rec.rpcMethod === "tools/list") reply = rpcResult(rec.rpcId, { tools: [ECHO_TOOL] });
      else if (rec.rpcMethod === "tools/call") reply = rpcResult(rec.rpcId, echoResult(rec));
      else if (rec.rpcMethod === "ping") reply = rpcResult(rec.rpcId, {});
      else reply = rpcError(rec.rpcId, -32601, "Method not found");
      if (reply !== undefined) writeSse(stream, { event: "message", data: reply });
      return;
    }
    return text(404, "Not found")(res, rec, req);
  };
}

// ---------------------------------------------------------------- stdio scripts

/** One line of a stdio script's log: its start, or a message it received. */
export interface StdioLogEntry {
  pid: number;
  event: "start" | "recv";
  /** For `recv`: the whole message. */
  message?: { method?: string; id?: unknown; params?: Record<string, unknown> };
}

export interface StdioScript extends kit.ScriptedStdio<StdioLogEntry> {
  /** Removes the temporary directory. */
  dispose(): void;
}

/**
 * The prelude every script gets. `process.argv[2]` is the log file; each process logs its start,
 * then every message it receives (synchronously, before the script reacts, so a process that exits
 * on a message still logged it). The script's source calls `onMessage(handler)` and `send(msg)`.
 */
const STDIO_PRELUDE = `${kit.PRELUDE_HEAD}
import { createInterface } from "node:readline";
const onMessage = (handler) => {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    let message;
    try { message = JSON.parse(line); } catch { return; }
    log({ event: "recv", message });
    handler(message);
  });
  lines.on("close", () => process.exit(0));
};
log({ event: "start" });
`;

/**
 * Writes a stdio server script (no SDK) to a temporary directory and returns how to run it. The
 * source runs after the prelude and may use `log`, `send` and `onMessage`.
 */
export function startStdioScript(source: string): StdioScript {
  const written = kit.writeStdioScript<StdioLogEntry>("tether-hostile-", STDIO_PRELUDE, source);
  const { log, pids } = written;
  return {
    command: written.command,
    args: written.args,
    log,
    pids,
    received: (pid) =>
      log().flatMap((e) =>
        e.pid === pid && e.event === "recv" && typeof e.message?.method === "string"
          ? [e.message.method]
          : [],
      ),
    dispose: () => kit.removeScript(written),
  };
}

export interface LegacyStdioBehaviour {
  /**
   * What any request other than `initialize` gets before `initialize` (the probe):
   * `error` with a code (and data), `silent` (never answered), `exit` (the process exits),
   * or `result` (a DiscoverResult listing `supportedVersions`).
   */
  discover:
    | { reply: "error"; code: number; data?: unknown }
    | { reply: "silent" }
    | { reply: "exit" }
    | { reply: "result"; supportedVersions: string[] };
  /**
   * What `initialize` gets: `echo` (our version if known, else 2025-11-25; the default), a given
   * `version`, or -32022 with `supported`. After a -32022, the process behaves as a modern server:
   * `server/discover` lists `supported` and `tools/list` answers.
   */
  initialize?:
    | { reply: "echo" }
    | { reply: "version"; version: string }
    | { reply: "unsupported"; supported: string[] };
}

/** A stdio server script's source: a legacy server whose probe and handshake replies are scripted. */
export function legacyStdioServer(behaviour: LegacyStdioBehaviour): string {
  return `
const behaviour = ${JSON.stringify(behaviour)};
const LEGACY = ${JSON.stringify(LEGACY_VERSIONS)};
const TOOLS = [${JSON.stringify(ECHO_TOOL)}];
let initialized = false;
let modern = false;
onMessage((m) => {
  if (typeof m.method !== "string" || m.id === undefined) return;
  const reply = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  const fail = (code, message, data) =>
    send({ jsonrpc: "2.0", id: m.id, error: data === undefined ? { code, message } : { code, message, data } });
  if (m.method === "initialize") {
    const how = behaviour.initialize ?? { reply: "echo" };
    if (how.reply === "unsupported") {
      modern = true;
      return fail(-32022, "Unsupported protocol version", { supported: how.supported, requested: m.params?.protocolVersion ?? null });
    }
    initialized = true;
    const requested = m.params?.protocolVersion;
    const version = how.reply === "version" ? how.version : LEGACY.includes(requested) ? requested : "2025-11-25";
    return reply({ protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: "hostile-stdio", version: "0.0.0" } });
  }
  if (modern) {
    if (m.method === "server/discover") return reply({ resultType: "complete", supportedVersions: behaviour.initialize.supported, capabilities: { tools: {} }, ttlMs: 60000, cacheScope: "server" });
    if (m.method === "tools/list") return reply({ resultType: "complete", tools: TOOLS });
    return fail(-32601, "Method not found");
  }
  if (!initialized) {
    const d = behaviour.discover;
    if (d.reply === "silent") return;
    if (d.reply === "exit") process.exit(0);
    if (d.reply === "error") return fail(d.code, "Refused before initialize", d.data);
    if (m.method === "server/discover") return reply({ resultType: "complete", supportedVersions: d.supportedVersions, capabilities: { tools: {} }, ttlMs: 60000, cacheScope: "server" });
    if (m.method === "tools/list") return reply({ resultType: "complete", tools: TOOLS });
    return fail(-32601, "Method not found");
  }
  if (m.method === "tools/list") return reply({ tools: TOOLS });
  if (m.method === "tools/call") return reply({ content: [{ type: "text", text: String(m.params?.arguments?.text ?? "") }] });
  if (m.method === "ping") return reply({});
  return fail(-32601, "Method not found");
});
`;
}

// ---------------------------------------------------------------- ownership

/** Anything a test closes at its end: a client, a server. */
export interface Closes {
  close(): Promise<void>;
}

/**
 * The servers, scripts and clients of one test file, closed by `closeAll` (for `after`) in the
 * order their owners need, whatever failed first: every client (its goodbye still reaches its
 * server), then every server, then every script's folder. What it closed it forgets, so a test
 * may call it early and `after` again.
 */
export function hostileSet(): {
  http(handler: Handler, options?: { path?: string }): Promise<HostileServer>;
  script(source: string): StdioScript;
  server<S extends Closes>(server: S): S;
  client<C extends Closes>(client: C): C;
  closeAll(): Promise<void>;
} {
  const clients: Closes[] = [];
  const servers: Closes[] = [];
  const scripts: StdioScript[] = [];
  const server = <S extends Closes>(s: S): S => {
    servers.push(s);
    return s;
  };
  return {
    http: async (handler, options = {}) => server(await startHttp(handler, options)),
    script(source) {
      const s = startStdioScript(source);
      scripts.push(s);
      return s;
    },
    server,
    client(c) {
      clients.push(c);
      return c;
    },
    async closeAll() {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await Promise.all(servers.splice(0).map((s) => s.close()));
      for (const s of scripts.splice(0)) s.dispose();
    },
  };
}

// ---------------------------------------------------------------- example servers with flags

const READY_TIMEOUT_MS = 15_000;
const TERM_GRACE_MS = 3_000;

export interface ExampleServer {
  url: string;
  /** SIGTERM, then SIGKILL after a grace; resolves once the child exited. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `examples/servers/<file>` on port 0 with extra flags (e.g. `--modern-only`) and resolves
 * once it printed its `{"ready":true,"url":...}` line.
 */
export async function startExampleServer(
  file: string,
  flags: readonly string[] = [],
): Promise<ExampleServer> {
  // The fleet's resolver: the test runner's one-file bundle of the server when there is one.
  const fleet = (await import(new URL("../../examples/fleet.mjs", import.meta.url).href)) as {
    serverPath(file: string): string;
  };
  // An absolute path is a server of the tests' own (a fixture), started as it is.
  const path = isAbsolute(file) ? file : fleet.serverPath(file);
  const child: ChildProcess = spawn(process.execPath, [path, "--port", "0", ...flags, "--exit-with-stdin"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stderr = (stderr + c).slice(-2_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => fail(`printed no ready line within ${READY_TIMEOUT_MS} ms`),
      READY_TIMEOUT_MS,
    );
    const onData = (c: string) => {
      out += c;
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      done();
      try {
        const line = JSON.parse(out.slice(0, nl)) as { ready?: unknown; url?: unknown };
        if (line.ready !== true || typeof line.url !== "string") throw new Error("not a ready line");
        resolve(line.url);
      } catch {
        fail("printed an unexpected first line");
      }
    };
    const onExit = () => fail("exited before it was ready");
    function done() {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      child.stdout?.resume();
    }
    function fail(why: string) {
      done();
      child.kill("SIGKILL");
      reject(new Error(`${file} ${why}${stderr ? `; stderr: ${stderr.trim()}` : ""}`));
    }
    child.stdout?.setEncoding("utf8").on("data", onData);
    child.once("exit", onExit);
  });
  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), TERM_GRACE_MS);
        await exited;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}
