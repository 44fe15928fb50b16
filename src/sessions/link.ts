/**
 * A command's end of the session socket: finding a live daemon (a stale socket left by a crashed
 * one is removed, never trusted), starting one when asked, and routing reply frames to the
 * request that each answers.
 */
import { rmSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { checkFolder, checkSocket, prepareFolder, type SessionPlace } from "./folder.ts";
import { type Frame, MAX_FRAME_BYTES, readFrames, writeFrame } from "./frames.ts";
import { connectionErrorFor, unanswered } from "./launch-errors.ts";
import { errorToWire, sessionClosedError } from "./wire.ts";

/** How long a command waits for a daemon it started to say it is ready. */
export const DAEMON_READY_MS = 15_000;
/** The line a daemon prints on stdout once it listens. */
export const READY_LINE = "tether-sessions ready";

type Handler = (frame: Frame) => void;

export class SessionLink {
  readonly #socket: Socket;
  readonly #handlers = new Map<number, Handler>();
  #next = 1;
  #closed = false;
  /** The largest frame accepted: raised for a call whose reply may be larger (allowFrames). */
  #ceiling = MAX_FRAME_BYTES;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("error", () => {});
    socket.on("close", () => {
      this.#closed = true;
      const handlers = [...this.#handlers.values()];
      this.#handlers.clear();
      for (const h of handlers) h({ closed: true });
    });
    readFrames(
      socket,
      (frame) => {
        if (typeof frame.id === "number") this.#handlers.get(frame.id)?.(frame);
      },
      () => {},
      () => this.#ceiling,
    );
  }

  /** Accepts frames up to `maxBytes` from now on (never less than before). */
  allowFrames(maxBytes: number): void {
    if (maxBytes > this.#ceiling) this.#ceiling = maxBytes;
  }

  /**
   * The link to the running daemon, or undefined when there is none (no folder, no socket, or a
   * stale socket that refused the connection: that one is removed on the way).
   */
  static async find(place: SessionPlace, signal?: AbortSignal): Promise<SessionLink | undefined> {
    if (process.platform !== "win32") {
      try {
        checkFolder(place.folder);
      } catch (error) {
        if ((error as { cause?: { code?: string } }).cause?.code === "ENOENT") return undefined;
        throw error;
      }
      if (!checkSocket(place.socket)) return undefined;
    }
    const socket = await new Promise<Socket | undefined>((resolve, reject) => {
      const s = netConnect(place.socket);
      const onAbort = () => {
        s.destroy();
        reject(connectionErrorFor("cancelled", signal?.reason));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      s.once("connect", () => {
        signal?.removeEventListener("abort", onAbort);
        resolve(s);
      });
      s.once("error", (error: NodeJS.ErrnoException) => {
        signal?.removeEventListener("abort", onAbort);
        if (error.code === "ECONNREFUSED" || error.code === "ENOENT") {
          // Nobody listens: the daemon that made this socket is gone. Its file is ours (checked
          // above) and stale; it goes, and nothing is sent through it.
          if (process.platform !== "win32") rmSync(place.socket, { force: true });
          resolve(undefined);
        } else reject(connectionErrorFor("unreachable", error));
      });
    });
    return socket ? new SessionLink(socket) : undefined;
  }

  /** The link for a command on session `name`: `connection`/`closed` when no session process runs. */
  static async forSession(place: SessionPlace, name: string, signal?: AbortSignal): Promise<SessionLink> {
    const link = await SessionLink.find(place, signal);
    if (!link) throw sessionClosedError(name, "is not running (no session process)");
    return link;
  }

  /** The link to the running daemon, starting one (detached, by `launch`) when there is none. */
  static async ensure(
    place: SessionPlace,
    launch: { command: string; args: string[]; env?: NodeJS.ProcessEnv },
    signal?: AbortSignal,
  ): Promise<SessionLink> {
    const found = await SessionLink.find(place, signal);
    if (found) return found;
    prepareFolder(place.folder);
    await startDaemon(launch, signal);
    const started = await SessionLink.find(place, signal);
    if (!started) throw connectionErrorFor("no_daemon");
    return started;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a request; `onFrame` gets every frame that answers it, and `{closed: true}` if the link ends. */
  request(frame: Frame, onFrame: Handler): number {
    const id = this.#next++;
    if (this.#closed) {
      queueMicrotask(() => onFrame({ closed: true }));
      return id;
    }
    this.#handlers.set(id, onFrame);
    writeFrame(this.#socket, { ...frame, id });
    return id;
  }

  /** A frame that expects no answer (cancel, unlisten). */
  tell(frame: Frame): void {
    writeFrame(this.#socket, frame);
  }

  /** Forgets a request: later frames for it are dropped. */
  release(id: number): void {
    this.#handlers.delete(id);
  }

  /**
   * One request, one answer: a frame with `ok`, or with `error` (the daemon's, or a timeout of
   * our own when no answer came within `withinMs`), or `closed` when the link ended.
   */
  ask(frame: Frame, withinMs: number): Promise<Frame> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.release(id);
        resolve({ error: errorToWire(unanswered(withinMs)) });
      }, withinMs);
      timer.unref();
      const id = this.request(frame, (f) => {
        if ("ok" in f || "error" in f || f.closed === true) {
          clearTimeout(timer);
          this.release(id);
          resolve(f);
        }
      });
    });
  }

  close(): void {
    this.#socket.end();
  }
}

/**
 * Starts the daemon detached (its own session, no terminal) and waits for its ready line, by event.
 * Process spawning loads here, on first use: a command on a running session never needs it.
 */
async function startDaemon(
  launch: { command: string; args: string[]; env?: NodeJS.ProcessEnv },
  signal?: AbortSignal,
): Promise<void> {
  const { spawn } = await import("node:child_process");
  return new Promise((resolve, reject) => {
    const child = spawn(launch.command, launch.args, {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      env: launch.env ?? process.env,
      windowsHide: true,
    });
    let seen = "";
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.unref();
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => settle(connectionErrorFor("cancelled", signal?.reason));
    const timer = setTimeout(() => settle(connectionErrorFor("no_daemon")), DAEMON_READY_MS);
    timer.unref();
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", (error) => settle(connectionErrorFor("spawn", error)));
    child.once("exit", () => {
      if (seen.includes(READY_LINE)) settle();
      else settle(connectionErrorFor("no_daemon"));
    });
    child.stdout?.on("data", (d: Buffer) => {
      seen = (seen + d.toString("utf8")).slice(-200);
      if (seen.includes(READY_LINE)) settle();
    });
  });
}
