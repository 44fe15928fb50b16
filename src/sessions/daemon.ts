/**
 * The per-user background process that keeps sessions: a socket server in the user's private
 * folder, a map from session name to a connected Client, and a forwarder that runs each
 * command's request on that client under the command's own budget and signal. It is a user of
 * the library (connect() and the Client), nothing more: every deadline, ceiling and error of a
 * forwarded request is the client's own. It holds secrets (headers, tokens) in memory only.
 *
 * Lifetime: it starts when a command first needs it, and exits when its last session ends (or
 * when no session arrives within a short grace after it started).
 */
import { chmodSync, lstatSync, rmSync } from "node:fs";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import type { CallOptions, Client } from "../client/api.ts";
import type { Tool } from "../client/results.ts";
import { connect } from "../connect/connect.ts";
import { configError, interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type Clock, realClock } from "../lifecycle/clock.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { LIMITS } from "../options/limits.ts";
import type { ConnectOptions } from "../options/options.ts";
import { checkFolder, checkSocket, prepareFolder, type SessionPlace } from "./folder.ts";
import { type Frame, FrameWriter, readFrames, replyFrameCeiling } from "./frames.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleTimer } from "./idle.ts";
import { validSessionName } from "./names.ts";
import {
  errorToWire,
  isOperation,
  LISTEN_KINDS,
  type ListenKind,
  OPERATIONS,
  type SessionInfo,
  sessionClosedError,
} from "./wire.ts";

/** How long a daemon that has no session yet waits for one before it exits. */
export const START_GRACE_MS = 15_000;

/** Per-request options a command may set; everything else it sends is ignored. */
const WIRE_OPTIONS = [
  "timeoutMs",
  "maxResponseBytes",
  "resetTimeoutOnProgress",
  "maxTotalTimeoutMs",
  "ttlMs",
];

export interface DaemonOptions {
  place: SessionPlace;
  /** Connect options for what `session start` sent (a `config` error when it makes no sense). */
  connectOptions: (spec: JsonObject) => ConnectOptions;
  /** The library's connect(); replaceable in tests. */
  connect?: (options: ConnectOptions) => Promise<Client>;
  clock?: Clock;
  /** Ends the daemon: every session is closed, the socket removed. */
  signal?: AbortSignal;
  /** Called once the socket listens (or another live daemon already does). */
  onReady?: (already: boolean) => void;
  startGraceMs?: number;
  /**
   * Fits a `tool` request's arguments to the tool's input schema (the listing as a command on
   * the session sees it, redacted), or throws the `config` error a one-shot command would; absent
   * or with no listing (`listed` undefined), the arguments go as given.
   */
  checkArguments?: (tool: string, listed: readonly Tool[] | undefined, given: GivenArguments) => JsonObject;
}

/** A `tool` request's arguments as the command read them: which keys came as `key=value` text. */
export interface GivenArguments {
  args: JsonObject;
  plain: Set<string>;
}

interface Session {
  name: string;
  client: Client;
  target: string;
  startedAt: number;
  idle: IdleTimer;
  callTimeoutMs: number;
  callMaxBytes: number;
  /** Listeners to tell when the session ends. */
  watchers: Set<(error: TetherError) => void>;
}

interface Peer {
  socket: Socket;
  /** Every frame to this command goes through it, in order. */
  writer: FrameWriter;
  inflight: Map<unknown, AbortController>;
  listens: Map<unknown, () => void>;
}

/** Runs the daemon until its last session ends or its signal aborts. */
export async function runDaemon(o: DaemonOptions): Promise<void> {
  const clock = o.clock ?? realClock;
  const open = o.connect ?? connect;
  const sessions = new Map<string, Session>();
  const starting = new Set<string>();
  const peers = new Set<Peer>();
  /** Clients still closing: the daemon exits only once each has (their servers end first). */
  const closing = new Set<Promise<void>>();
  prepareFolder(o.place.folder);

  if (await liveDaemon(o.place.socket)) {
    o.onReady?.(true);
    return;
  }
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  let ending = false;
  let socketIno: number | undefined;
  const server: Server = createServer((socket) => accept(socket));

  const end = () => {
    if (ending) return;
    ending = true;
    clock.clearTimeout(grace);
    for (const s of [...sessions.values()]) drop(s, "was ended");
    server.close();
    removeOurSocket();
    // Replies already asked for go out before the connections close.
    for (const p of peers) void p.writer.settled().then(() => p.socket.end());
    void Promise.all(closing).then(done);
  };
  const removeOurSocket = () => {
    if (process.platform === "win32") return;
    try {
      if (lstatSync(o.place.socket).ino === socketIno) rmSync(o.place.socket, { force: true });
    } catch {
      // Already gone.
    }
  };
  const maybeEnd = () => {
    if (sessions.size === 0 && starting.size === 0) end();
  };
  const grace = clock.setTimeout(() => {
    if (sessions.size === 0 && starting.size === 0) end();
  }, o.startGraceMs ?? START_GRACE_MS);
  o.signal?.addEventListener("abort", end, { once: true });

  /** Ends one session: its client closes, every command listening to it is told. */
  const drop = (s: Session, why: string) => {
    if (sessions.get(s.name) !== s) return;
    sessions.delete(s.name);
    s.idle.stop();
    const error = sessionClosedError(s.name, why);
    for (const tell of s.watchers) tell(error);
    s.watchers.clear();
    const closed = s.client.close();
    closing.add(closed);
    void closed.then(() => closing.delete(closed));
    if (!ending) maybeEnd();
  };

  const infoOf = (s: Session): SessionInfo => ({
    name: s.name,
    target: s.target,
    era: s.client.era,
    protocolVersion: s.client.protocolVersion,
    transportMode: s.client.transportMode,
    serverInfo: s.client.serverInfo,
    serverCapabilities: s.client.serverCapabilities,
    instructions: s.client.instructions,
    attempts: s.client.attempts,
    startedAt: s.startedAt,
    idleMs: s.idle.busy ? 0 : Math.max(0, Math.round(clock.now() - s.idle.lastUsed)),
    idleTimeoutMs: s.idle.timeoutMs,
    callTimeoutMs: s.callTimeoutMs,
    callMaxBytes: s.callMaxBytes,
    daemonPid: process.pid,
  });

  /** The live session by that name; one whose client has closed is dropped on the way. */
  const live = (name: unknown): Session => {
    const s = typeof name === "string" ? sessions.get(name) : undefined;
    if (s && s.client.state !== "closed" && s.client.state !== "closing") return s;
    if (s) drop(s, "has ended: its connection closed");
    throw sessionClosedError(String(name ?? ""), "is not running");
  };

  function accept(socket: Socket): void {
    // The folder is the access control (Node cannot ask the kernel who the peer is): it is
    // checked again for every connection, and a daemon whose folder changed under it stops.
    try {
      checkFolder(o.place.folder);
      if (process.platform !== "win32" && !checkSocket(o.place.socket)) throw new Error("socket gone");
    } catch {
      socket.destroy();
      end();
      return;
    }
    const peer: Peer = { socket, writer: new FrameWriter(socket), inflight: new Map(), listens: new Map() };
    peers.add(peer);
    socket.on("error", () => {});
    socket.on("close", () => {
      peers.delete(peer);
      // A command that went away takes its requests with it: each is cancelled on the server.
      for (const ac of peer.inflight.values()) ac.abort(new Error("the command went away"));
      for (const stop of peer.listens.values()) stop();
      peer.inflight.clear();
      peer.listens.clear();
    });
    readFrames(
      socket,
      (frame) => {
        void handle(peer, frame);
      },
      () => {},
    );
  }

  /** One answer; `ok` frames may be as large as the call's ceiling allows (`maxBytes`). */
  const reply = async (peer: Peer, id: unknown, body: Frame, maxBytes?: number): Promise<void> => {
    if ((await peer.writer.write({ id, ...body }, maxBytes)) || !("ok" in body) || peer.socket.destroyed)
      return;
    // A result over the frame ceiling is a limit failure, said as one.
    await peer.writer.write({
      id,
      error: errorToWire(
        new TetherError({
          code: "limit",
          reason: "session_frame_too_large",
          stage: "call",
          phase: "call",
          message: "the result is larger than a session frame may carry",
          effect: "done",
        }),
      ),
    });
  };
  const fail = (peer: Peer, id: unknown, error: unknown) =>
    reply(peer, id, { error: errorToWire(asTetherError(error, { stage: "call", phase: "call" })) });

  async function handle(peer: Peer, frame: Frame): Promise<void> {
    const { id, op } = frame;
    try {
      switch (op) {
        case "start":
          return await start(peer, frame);
        case "list":
          return reply(peer, id, { ok: [...sessions.values()].map((s) => s.client.redact(infoOf(s))) });
        case "info": {
          const s = live(frame.session);
          return reply(peer, id, { ok: s.client.redact(infoOf(s)) });
        }
        case "stop": {
          const s = live(frame.name);
          drop(s, "was stopped");
          return reply(peer, id, { ok: null });
        }
        case "call":
          return await call(peer, frame);
        case "tool":
          return await tool(peer, frame);
        case "listen":
          return listen(peer, frame);
        case "unlisten": {
          peer.listens.get(frame.target)?.();
          return;
        }
        case "cancel":
          peer.inflight.get(frame.target)?.abort(new Error("cancelled by the command"));
          return;
        default:
          throw configError("session_protocol", "unknown session operation");
      }
    } catch (error) {
      fail(peer, id, error);
    }
  }

  async function start(peer: Peer, frame: Frame): Promise<void> {
    const { id, name } = frame;
    if (!validSessionName(name))
      throw configError("invalid_session_name", "a session name is 1-64 letters, digits, '.', '_' or '-'");
    if (sessions.has(name) || starting.has(name))
      throw configError("session_exists", `a session named ${name} is already running`);
    const idleTimeoutMs =
      typeof frame.idleTimeoutMs === "number" ? frame.idleTimeoutMs : DEFAULT_IDLE_TIMEOUT_MS;
    const spec = (typeof frame.spec === "object" && frame.spec !== null ? frame.spec : {}) as JsonObject;
    const ac = new AbortController();
    peer.inflight.set(id, ac);
    starting.add(name);
    let session: Session | undefined;
    try {
      const options = o.connectOptions(spec);
      const client = await open({
        ...options,
        signal: ac.signal,
        onEvent: (event: LifecycleEvent) => {
          // Establishment's events go to the command that asked (for --events); a later
          // `closed` means the server went away and the session with it.
          if (session === undefined) void peer.writer.write({ id, event: event as unknown as Frame });
          else if (event.type === "closed") drop(session, "has ended: its server closed the connection");
        },
      });
      if (ending || ac.signal.aborted) {
        await client.close();
        throw ending
          ? sessionClosedError(name, "was cancelled while starting")
          : interruptError(new Interrupt("caller", "cancelled"), { stage: "initialize", phase: "discovery" });
      }
      session = {
        name,
        client,
        target: typeof frame.target === "string" ? frame.target.slice(0, 500) : "",
        startedAt: Date.now(),
        idle: new IdleTimer(idleTimeoutMs, clock, () => {
          if (session) drop(session, "ended after its idle timeout");
        }),
        callTimeoutMs: options.call?.timeoutMs ?? options.timeoutMs ?? LIMITS.timeoutMs.default,
        callMaxBytes:
          options.call?.maxResponseBytes ?? options.maxResponseBytes ?? LIMITS.maxResponseBytes.default,
        watchers: new Set(),
      };
      sessions.set(name, session);
      clock.clearTimeout(grace);
      reply(peer, id, { ok: client.redact(infoOf(session)) });
    } catch (error) {
      // Said here, before the daemon may end below: a first start's own failure (a 401, a
      // timeout, a cancel) reaches the command as what it is, not as the daemon going away.
      fail(peer, id, error);
    } finally {
      starting.delete(name);
      peer.inflight.delete(id);
      if (!session) maybeEnd();
    }
  }

  async function call(peer: Peer, frame: Frame): Promise<void> {
    const { id, method } = frame;
    if (!isOperation(method)) throw configError("session_protocol", "unknown session operation");
    const s = live(frame.session);
    const args = Array.isArray(frame.args) ? frame.args.map((a) => (a === null ? undefined : a)) : [];
    const at = OPERATIONS[method];
    args.length = at;
    const given = (typeof frame.options === "object" && frame.options !== null ? frame.options : {}) as Frame;
    const ac = new AbortController();
    const options: Record<string, unknown> = { signal: ac.signal };
    for (const key of WIRE_OPTIONS) if (given[key] !== undefined) options[key] = given[key];
    if (given.task !== undefined) options.task = given.task;
    // S4: everything of the server's goes back redacted with the connection's secrets, which the
    // command never holds.
    const redact = <T>(v: T): T => s.client.redact(v);
    if (given.progress === true)
      options.onProgress = (p: unknown) => void peer.writer.write({ id, progress: redact(p) });
    if (given.status === true)
      options.onStatus = (t: unknown) => void peer.writer.write({ id, status: redact(t) });
    args.push(options);
    const release = s.idle.begin();
    peer.inflight.set(id, ac);
    try {
      // The client's own cache answers a listing it already holds (dropped when the server
      // says the tools changed): a command through a session lists without a round trip.
      const cached = method === "listTools" ? s.client.cachedTools : undefined;
      const fn = s.client[method] as (...a: unknown[]) => Promise<unknown>;
      const result = cached ?? (await fn.apply(s.client, args));
      // Notifications are handed to listeners a turn later: those that came before the result
      // (a log line the tool sent while it ran) go out ahead of it, in the order the server sent them.
      await new Promise((resolve) => setImmediate(resolve));
      const ceiling = typeof given.maxResponseBytes === "number" ? given.maxResponseBytes : s.callMaxBytes;
      await reply(peer, id, { ok: redact(result ?? null) as Frame }, replyFrameCeiling(ceiling));
    } finally {
      release();
      peer.inflight.delete(id);
    }
  }

  /** The listing the session's commands see: redacted, kept as long as the client's cache is. */
  const redactedTools = new WeakMap<readonly Tool[], readonly Tool[]>();
  const toolsSeen = (s: Session, tools: readonly Tool[]): readonly Tool[] => {
    const seen = redactedTools.get(tools) ?? s.client.redact(tools);
    redactedTools.set(tools, seen);
    return seen;
  };

  /**
   * `tether call @NAME TOOL ARGS` in one round trip: the tool listing (the client's cache, or one
   * tools/list under the command's discovery budget), the arguments fitted to the tool's schema
   * here, then the call under the command's call budget. A `calling` frame says the call is about
   * to leave, with the session's own budget and ceiling for a command that names none; progress
   * goes out as it arrives; the reply is the result or the one error, as for `call`.
   */
  async function tool(peer: Peer, frame: Frame): Promise<void> {
    const { id } = frame;
    const s = live(frame.session);
    const name = typeof frame.tool === "string" ? frame.tool : "";
    const given = (typeof frame.options === "object" && frame.options !== null ? frame.options : {}) as Frame;
    const number = (v: unknown) => (typeof v === "number" ? v : undefined);
    const ac = new AbortController();
    const release = s.idle.begin();
    peer.inflight.set(id, ac);
    const redact = <T>(v: T): T => s.client.redact(v);
    try {
      const listed =
        s.client.cachedTools ??
        (await s.client
          .listTools({
            signal: ac.signal,
            timeoutMs: number(given.discoveryTimeoutMs),
            maxResponseBytes: number(given.discoveryMaxBytes),
          })
          .catch((error: unknown) => {
            // A server that cannot list its tools leaves the schema unknown: the arguments go as written.
            if (error instanceof TetherError && error.code === "remote_error") return undefined;
            throw error;
          }));
      const args = (typeof frame.args === "object" && frame.args !== null ? frame.args : {}) as JsonObject;
      const plain = new Set(
        Array.isArray(frame.plain) ? frame.plain.filter((k) => typeof k === "string") : [],
      );
      const fitted = o.checkArguments
        ? o.checkArguments(name, listed && toolsSeen(s, listed), { args, plain })
        : args;
      const options: CallOptions = { signal: ac.signal };
      for (const key of WIRE_OPTIONS) if (given[key] !== undefined) (options as Frame)[key] = given[key];
      if (given.progress === true)
        options.onProgress = (p) => void peer.writer.write({ id, progress: redact(p) as unknown as Frame });
      void peer.writer.write({
        id,
        calling: { callTimeoutMs: s.callTimeoutMs, callMaxBytes: s.callMaxBytes },
      });
      const result = await s.client.callTool(name, fitted, options);
      // As for `call`: notifications that came before the result go out ahead of it.
      await new Promise((resolve) => setImmediate(resolve));
      const ceiling = typeof given.maxResponseBytes === "number" ? given.maxResponseBytes : s.callMaxBytes;
      await reply(peer, id, { ok: redact(result) as unknown as Frame }, replyFrameCeiling(ceiling));
    } finally {
      release();
      peer.inflight.delete(id);
    }
  }

  function listen(peer: Peer, frame: Frame): void {
    const { id, kind } = frame;
    if (typeof kind !== "string" || !LISTEN_KINDS.has(kind))
      throw configError("session_protocol", "unknown notification stream");
    const s = live(frame.session);
    const c = s.client;
    const send = (payload: unknown) =>
      void peer.writer.write({ id, notification: c.redact(payload) as Frame });
    const off = subscribe(c, kind as ListenKind, typeof frame.method === "string" ? frame.method : "*", send);
    // A command listening keeps its session in use: an idle timeout does not end a watch.
    const release = s.idle.begin();
    const onEnd = (error: TetherError) => {
      reply(peer, id, { error: errorToWire(error) });
      stop();
    };
    const stop = () => {
      off();
      release();
      s.watchers.delete(onEnd);
      peer.listens.delete(id);
    };
    s.watchers.add(onEnd);
    peer.listens.set(id, stop);
    reply(peer, id, { listening: true });
  }

  try {
    await listen0(server, o.place);
  } catch (error) {
    clock.clearTimeout(grace);
    // Two first commands may start two daemons at once: the one that lost the race steps aside
    // for the one that listens (the command then finds that one).
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE" && (await liveDaemon(o.place.socket))) {
      o.onReady?.(true);
      return;
    }
    throw error;
  }
  if (process.platform !== "win32") socketIno = lstatSync(o.place.socket).ino;
  o.onReady?.(false);
  await finished;
}

function subscribe(c: Client, kind: ListenKind, method: string, send: (p: unknown) => void): () => void {
  switch (kind) {
    case "notification":
      return c.onNotification(method, (n) => send(n));
    case "log":
      return c.onLogMessage((m) => send(m));
    case "list_changed_tools":
      return c.onListChanged("tools", () => send({}));
    case "list_changed_resources":
      return c.onListChanged("resources", () => send({}));
    case "list_changed_prompts":
      return c.onListChanged("prompts", () => send({}));
    case "resource_updated":
      return c.onResourceUpdated((u) => send(u));
    case "task_status":
      return c.onTaskStatus((t) => send(t));
  }
}

/** Whether a daemon answers on the socket now. A stale socket file (connect refused) is removed. */
async function liveDaemon(socket: string): Promise<boolean> {
  if (process.platform !== "win32" && !checkSocket(socket)) return false;
  const alive = await new Promise<boolean>((resolve) => {
    const s = netConnect(socket);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
  if (!alive && process.platform !== "win32") rmSync(socket, { force: true });
  return alive;
}

/** Listens on the socket, owner-only. */
function listen0(server: Server, place: SessionPlace): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(place.socket, () => {
      server.off("error", reject);
      // The folder already admits only its owner; the socket says so too.
      if (process.platform !== "win32") chmodSync(place.socket, 0o600);
      resolve();
    });
  });
}
