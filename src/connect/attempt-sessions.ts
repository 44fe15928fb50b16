import { serveBounded } from "../client/handlers.ts";
import type { Stage } from "../errors/codes.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { Transport } from "../jsonrpc/channel.ts";
import { Session } from "../jsonrpc/session.ts";
import type { Deadline } from "../lifecycle/deadline.ts";
import type { ResolvedTarget } from "../options/resolve.ts";
import type { Runtime } from "./runtime.ts";
import { type HttpTarget, type StdioTarget, stdioTransport } from "./transports.ts";

type HttpTransports = typeof import("./http-transports.ts");

/**
 * The HTTP transports' module for an HTTP target (loaded once per process, on the first HTTP
 * connection); undefined for stdio, which never loads it.
 */
export async function httpTransportsFor(target: ResolvedTarget): Promise<HttpTransports | undefined> {
  return target.kind === "http" ? await import("./http-transports.ts") : undefined;
}

/**
 * The sessions one attempt opens, each over a fresh transport: wired to the application's
 * handlers (under the call phase's time budget, as a call is: M4) and to the event sink, told
 * the stage in progress, and closed if the attempt fails. The one handed to the client leaves
 * the set.
 */
export class AttemptSessions {
  readonly #rt: Runtime;
  readonly #deadline: Deadline;
  readonly #attempt: number;
  readonly #open: Session[] = [];
  readonly #httpTransports: HttpTransports | undefined;

  /** `http`: the HTTP transports (httpTransportsFor), for an HTTP target. */
  constructor(rt: Runtime, deadline: Deadline, attempt: number, http?: HttpTransports) {
    this.#rt = rt;
    this.#deadline = deadline;
    this.#attempt = attempt;
    this.#httpTransports = http;
  }

  stdio(target: StdioTarget): Session {
    const ceiling = this.#sharedCeiling();
    return ceiling.bind(this.#track(stdioTransport(this.#rt, target, ceiling.get)));
  }

  streamableHttp(target: HttpTarget): Session {
    return this.#track(this.#http().streamableHttpTransport(this.#rt, target));
  }

  sse(target: HttpTarget): Session {
    const ceiling = this.#sharedCeiling();
    return ceiling.bind(this.#track(this.#http().sseTransport(this.#rt, target, ceiling.get)));
  }

  /** The HTTP transports, loaded by the attempt because the target is HTTP. */
  #http(): HttpTransports {
    const http = this.#httpTransports;
    if (!http) throw new TypeError("internal: an HTTP transport was asked for a stdio target");
    return http;
  }

  /** A stage starts: a closure on any open session is reported at it. */
  entered(stage: Stage): void {
    for (const s of this.#open) s.stage = stage;
  }

  /** Closes one session the attempt is done with (a probed process, a refused transport). */
  async release(session: Session): Promise<void> {
    this.#forget(session);
    await session.close();
  }

  /** Closes every open session: detection starts over, inside the same deadline. */
  async releaseAll(): Promise<void> {
    for (const s of this.#open.splice(0)) await s.close();
  }

  /** The session is the client's now: open, in the call phase, and no longer the attempt's to close. */
  handOver(session: Session): void {
    this.#forget(session);
    session.markOpen();
    session.phase = "call";
    session.stage = "call";
  }

  /** The attempt failed: closes every open session with its error; what closing met is attached to it. */
  async disposeAll(primary: TetherError): Promise<void> {
    for (const s of this.#open.splice(0)) {
      try {
        await s.close(primary);
      } catch (e) {
        primary.cleanupErrors.push(e);
      }
      primary.cleanupErrors.push(...s.transport.cleanupErrors);
    }
  }

  #forget(session: Session): void {
    const i = this.#open.indexOf(session);
    if (i !== -1) this.#open.splice(i, 1);
  }

  /**
   * The frame ceiling of a shared stream (stdio, HTTP+SSE), bound to its session once there is
   * one: frames are refused as they are read once they pass what any pending request may take.
   */
  #sharedCeiling(): { get: () => number; bind: (session: Session) => Session } {
    const o = this.#rt.options;
    let session: Session | undefined;
    const fallback = Math.max(o.discovery.maxResponseBytes, o.call.maxResponseBytes, o.maxFrameBytes);
    return {
      get: () => session?.frameCeiling() ?? fallback,
      bind: (s) => {
        session = s;
        return s;
      },
    };
  }

  #track(transport: Transport): Session {
    const { options: o, events, redactor } = this.#rt;
    const started = this.#deadline.elapsedMs();
    const attempt = this.#attempt;
    const session = new Session(transport, {
      redactor,
      maxFrameBytes: o.maxFrameBytes,
      serve: (method, params, signal) =>
        serveBounded(o.handlers, method, params, signal, { clock: o.clock, timeoutMs: o.call.timeoutMs }),
      onClosed: (closure) =>
        events.emit({
          type: "closed",
          closure:
            closure.closure ??
            (closure.code === "limit"
              ? "limit"
              : closure.code === "protocol"
                ? "protocol"
                : "closed_by_client"),
          elapsedMs: this.#deadline.elapsedMs() - started,
          mode: transport.mode,
          attempt,
        }),
      onInboundDropped: (drops) =>
        events.emit({
          type: "inbound_dropped",
          requests: drops.requests,
          notifications: drops.notifications,
          elapsedMs: this.#deadline.elapsedMs() - started,
          mode: transport.mode,
          attempt,
        }),
      clock: o.clock,
    });
    this.#open.push(session);
    return session;
  }
}
