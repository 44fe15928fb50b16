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
import { lstatSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { Client } from "../client/api.ts";
import { connect } from "../connect/connect.ts";
import { configError, interruptError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type Clock, realClock } from "../lifecycle/clock.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { LIMITS } from "../options/limits.ts";
import type { ConnectOptions } from "../options/options.ts";
import { listen0, liveDaemon } from "./daemon-socket.ts";
import { checkFolder, checkSocket, prepareFolder, type SessionPlace } from "./folder.ts";
import { type CheckArguments, forwarder, type Peer, type Session } from "./forwarder.ts";
import { type Frame, FrameWriter, readFrames } from "./frames.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, IdleTimer } from "./idle.ts";
import { subscribe } from "./listen-streams.ts";
import { validSessionName } from "./names.ts";
import { errorToWire, LISTEN_KINDS, type ListenKind, type SessionInfo, sessionClosedError } from "./wire.ts";

/** How long a daemon that has no session yet waits for one before it exits. */
export const START_GRACE_MS = 15_000;

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
  checkArguments?: CheckArguments;
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

  const { call, tool } = forwarder({ live, reply, checkArguments: o.checkArguments });

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
