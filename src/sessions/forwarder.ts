/**
 * What the session process does with a command's operation on a session: `call` forwards one
 * method of the client, `tool` is `tether call @NAME` in one round trip (listing, argument check,
 * call). Each runs under the command's own budgets and signal, keeps its session busy while it
 * runs, and answers with the server's result redacted with the connection's secrets.
 */

import type { Socket } from "node:net";
import type { CallOptions, Client } from "../client/api.ts";
import type { Tool } from "../client/results.ts";
import { configError } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type Frame, type FrameWriter, replyFrameCeiling } from "./frames.ts";
import type { IdleTimer } from "./idle.ts";
import { isOperation, OPERATIONS } from "./wire.ts";

/** Per-request options a command may set; everything else it sends is ignored. */
const WIRE_OPTIONS = [
  "timeoutMs",
  "maxResponseBytes",
  "resetTimeoutOnProgress",
  "maxTotalTimeoutMs",
  "ttlMs",
];

/** The options object of a command's request, or none. */
function givenOptions(frame: Frame): Frame {
  return (typeof frame.options === "object" && frame.options !== null ? frame.options : {}) as Frame;
}

/** A `tool` request's arguments as the command read them: which keys came as `key=value` text. */
export interface GivenArguments {
  args: JsonObject;
  plain: Set<string>;
}

/**
 * Fits a `tool` request's arguments to the tool's input schema (the listing as a command on the
 * session sees it, redacted), or throws the `config` error a one-shot command would.
 */
export type CheckArguments = (
  tool: string,
  listed: readonly Tool[] | undefined,
  given: GivenArguments,
) => JsonObject;

export interface Session {
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

export interface Peer {
  socket: Socket;
  /** Every frame to this command goes through it, in order. */
  writer: FrameWriter;
  inflight: Map<unknown, AbortController>;
  listens: Map<unknown, () => void>;
}

export interface ForwarderParts {
  /** The live session a request names, or the error that it is not running. */
  live: (name: unknown) => Session;
  /** Writes a reply frame to the command, within `maxBytes`. */
  reply: (peer: Peer, id: unknown, body: Frame, maxBytes?: number) => Promise<void>;
  checkArguments?: CheckArguments | undefined;
}

export function forwarder({ live, reply, checkArguments }: ForwarderParts) {
  async function call(peer: Peer, frame: Frame): Promise<void> {
    const { id, method } = frame;
    if (!isOperation(method)) throw configError("session_protocol", "unknown session operation");
    const s = live(frame.session);
    const args = Array.isArray(frame.args) ? frame.args.map((a) => (a === null ? undefined : a)) : [];
    args.length = OPERATIONS[method];
    const given = givenOptions(frame);
    await forward(peer, id, s, given, (signal) => {
      const options = wireOptions(peer, id, s, given, signal);
      if (given.task !== undefined) options.task = given.task;
      if (given.status === true)
        options.onStatus = (t: unknown) => void peer.writer.write({ id, status: s.client.redact(t) });
      args.push(options);
      // The client's own cache answers a listing it already holds (dropped when the server
      // says the tools changed): a command through a session lists without a round trip.
      const cached = method === "listTools" ? s.client.cachedTools : undefined;
      const fn = s.client[method] as (...a: unknown[]) => Promise<unknown>;
      return cached ? Promise.resolve(cached) : fn.apply(s.client, args);
    });
  }

  /**
   * One forwarded operation from its request to its reply: cancellable by the command (`cancel`,
   * a closed socket), keeping its session busy, answered with the server's result redacted with
   * the connection's secrets (S4: the command never holds them), within the command's ceiling.
   */
  async function forward(
    peer: Peer,
    id: unknown,
    s: Session,
    given: Frame,
    work: (signal: AbortSignal) => Promise<unknown>,
  ): Promise<void> {
    const ac = new AbortController();
    const release = s.idle.begin();
    peer.inflight.set(id, ac);
    try {
      const result = await work(ac.signal);
      // Notifications are handed to listeners a turn later: those that came before the result
      // (a log line the tool sent while it ran) go out ahead of it, in the order the server sent them.
      await new Promise((resolve) => setImmediate(resolve));
      const ceiling = typeof given.maxResponseBytes === "number" ? given.maxResponseBytes : s.callMaxBytes;
      await reply(peer, id, { ok: s.client.redact(result ?? null) as Frame }, replyFrameCeiling(ceiling));
    } finally {
      release();
      peer.inflight.delete(id);
    }
  }

  /** The per-request options a command sent that the library takes, and its progress when it asked. */
  function wireOptions(
    peer: Peer,
    id: unknown,
    s: Session,
    given: Frame,
    signal: AbortSignal,
  ): Frame & CallOptions {
    const options: Frame & CallOptions = { signal };
    for (const key of WIRE_OPTIONS) if (given[key] !== undefined) options[key] = given[key];
    if (given.progress === true)
      options.onProgress = (p) =>
        void peer.writer.write({ id, progress: s.client.redact(p) as unknown as Frame });
    return options;
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
    const given = givenOptions(frame);
    const number = (v: unknown) => (typeof v === "number" ? v : undefined);
    await forward(peer, id, s, given, async (signal) => {
      const listed =
        s.client.cachedTools ??
        (await s.client
          .listTools({
            signal,
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
      const fitted = checkArguments
        ? checkArguments(name, listed && toolsSeen(s, listed), { args, plain })
        : args;
      const options = wireOptions(peer, id, s, given, signal);
      void peer.writer.write({
        id,
        calling: { callTimeoutMs: s.callTimeoutMs, callMaxBytes: s.callMaxBytes },
      });
      return s.client.callTool(name, fitted, options);
    });
  }

  return { call, tool };
}
