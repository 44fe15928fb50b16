/**
 * The sessions the `--listen` face holds: a legacy host's own (its own upstream connection, named
 * by `Mcp-Session-Id` or by the HTTP+SSE `sessionId`), which ends on DELETE, when its stream
 * closes, after the idle timeout, or when its upstream ends; and the one that sessionless
 * 2026-07-28 hosts share, opened on the first of their requests (again after its upstream failed)
 * and closed with the listener.
 */

import { randomUUID } from "node:crypto";
import type { BridgeSessionOptions } from "./bridge-session.ts";
import { Hosted } from "./hosted.ts";

/** Sessions at once; more `initialize` requests are refused with 503 until one ends. */
export const MAX_SESSIONS = 64;
/** A session nobody used for this long is ended (its upstream closed). */
export const DEFAULT_IDLE_MS = 30 * 60 * 1000;

export type HostedOptions = Omit<BridgeSessionOptions, "link" | "onFatal">;

export class HostSessions {
  readonly #options: HostedOptions;
  readonly #sessions = new Map<string, Hosted>();
  #shared: Hosted | undefined;
  readonly #sweep: NodeJS.Timeout;

  constructor(options: HostedOptions, idleMs: number) {
    this.#options = options;
    this.#sweep = setInterval(
      () => {
        const now = Date.now();
        for (const [id, hosted] of this.#sessions)
          if (hosted.session.pending === 0 && now - hosted.lastActive > idleMs) void this.end(id);
      },
      Math.max(50, Math.min(60_000, Math.floor(idleMs / 4))),
    );
    this.#sweep.unref();
  }

  /** No session more may open. */
  get full(): boolean {
    return this.#sessions.size >= MAX_SESSIONS;
  }

  get(id: string): Hosted | undefined {
    return this.#sessions.get(id);
  }

  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  /** The session sessionless hosts share: opened on first use, and again after it failed. */
  shared(): Hosted {
    if (!this.#shared || this.#shared.closed) {
      const hosted: Hosted = new Hosted(
        {
          ...this.#options,
          // The shared connection failed: the next sessionless request opens a fresh one.
          onFatal: () => {
            if (this.#shared === hosted) this.#shared = undefined;
            void hosted.close();
          },
        },
        undefined,
        "shared",
      );
      this.#shared = hosted;
    }
    return this.#shared;
  }

  /** A new session of a host's own, ended when its upstream ends. */
  open(kind: "streamable" | "sse"): Hosted {
    const id = randomUUID();
    const hosted: Hosted = new Hosted({ ...this.#options, onFatal: () => void this.end(id) }, id, kind);
    this.#sessions.set(id, hosted);
    return hosted;
  }

  async end(id: string): Promise<void> {
    const hosted = this.#sessions.get(id);
    if (!hosted) return;
    this.#sessions.delete(id);
    await hosted.close();
  }

  /** Ends every session, the shared one too, and the idle sweep. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const shared = this.#shared;
    await Promise.all(
      [...this.#sessions.keys()].map((id) => this.end(id)).concat(shared ? [shared.close()] : []),
    );
  }
}
