/**
 * The host's requests the bridge is working on, from their arrival to their one answer. Each has
 * a controller (the host's cancellation reaches the upstream call through it); answering takes the
 * request out of the open ones, so it is answered once, a request the host cancelled never, and a
 * forwarded request's controller may serve the next one. Every answer goes out through the
 * session's one redacting link (S4).
 */

import { getEventListeners } from "node:events";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject, JsonRpcErrorObject, JsonRpcId, JsonRpcMessage } from "../jsonrpc/messages.ts";
import { resultFor, rpcErrorFor } from "./translate.ts";

/** Where the session's messages to the host go. */
export interface HostLink {
  /**
   * Sends one message to the host. `related` names the host request it belongs to: HTTP sends
   * it on that request's response stream while it is open.
   */
  send(message: JsonRpcMessage, related?: JsonRpcId): void;
}

/** A server request waiting for a modern host's answer, carried in an `input_required` round. */
export interface Asked {
  method: string;
  params: JsonObject;
  sent: boolean;
  resolve: (answer: JsonObject) => void;
  reject: (error: unknown) => void;
}

/**
 * A modern host's request still running upstream. Its `carrier` is the host request that will
 * receive what comes next (the result, or the next round of questions); between rounds there is
 * none, and what arrives waits for the host's retry.
 */
export interface Rounds {
  /** Named (and registered for the host's retry) when a first round goes out; most requests have none. */
  token: string | undefined;
  carrier: JsonRpcId | undefined;
  caps: JsonObject;
  asked: Map<string, Asked>;
  settled?: { result?: JsonObject; error?: unknown };
  controller: AbortController;
  method: string;
}

/** One host request the bridge is working on. */
export interface InFlight {
  id: JsonRpcId;
  method: string;
  modern: boolean;
  controller: AbortController;
  /**
   * Its controller served a request forwarded with `client.request`, whose listener on the signal
   * is gone once that request settled: when the entry is answered, the controller may serve the
   * next request (see recycle).
   */
  forwarded?: boolean;
  /** A modern host asked for log messages with this request. */
  logs: boolean;
  rounds?: Rounds;
  /** A modern host's `subscriptions/listen`: what it asked for, and the URIs subscribed upstream. */
  listen?: { filter: JsonObject; uris: string[] };
}

/** Controllers kept for reuse (see recycle): about as many as requests a host has open at once. */
const SPARE_CONTROLLERS = 64;

export interface OpenRequestsOptions {
  /** The session's one redacting link to the host. */
  send: HostLink["send"];
  redactor: Redactor;
  /** The server's name as replies to a modern host carry it; undefined while the upstream is not up. */
  serverInfo: () => JsonObject | undefined;
}

export class OpenRequests {
  readonly #o: OpenRequestsOptions;
  readonly #open = new Map<string, InFlight>();
  /** Controllers of answered requests, never aborted and listened to by no one: see recycle. */
  readonly #spare: AbortController[] = [];
  #closed = false;

  constructor(options: OpenRequestsOptions) {
    this.#o = options;
  }

  get size(): number {
    return this.#open.size;
  }

  /** The open request of this id (as the host wrote it, or as a cancellation names it). */
  get(id: unknown): InFlight | undefined {
    return this.#open.get(String(id));
  }

  has(id: JsonRpcId): boolean {
    return this.#open.has(String(id));
  }

  add(entry: InFlight): void {
    this.#open.set(String(entry.id), entry);
  }

  /** Takes a request out of the open ones without answering it (cancelled, or answered by a round). */
  delete(id: JsonRpcId): void {
    this.#open.delete(String(id));
  }

  values(): IterableIterator<InFlight> {
    return this.#open.values();
  }

  /** The one request open, when there is exactly one: what the server says next belongs to it. */
  sole(): JsonRpcId | undefined {
    return this.#open.size === 1 ? [...this.#open.values()][0]!.id : undefined;
  }

  /** A controller for a new request: a spare one when there is one. */
  controller(): AbortController {
    return this.#spare.pop() ?? new AbortController();
  }

  /** Every open request abandoned: its controller aborted, the upstream call with it. */
  close(reason: string): void {
    this.#closed = true;
    for (const f of this.#open.values()) f.controller.abort(new Error(reason));
  }

  /**
   * Keeps a controller for a later request. An AbortSignal is the one costly object per bridged
   * request (an event target, made and then listened to by the client's call clock), and one that
   * never aborted and has no listener left is as good as new. One that aborted, or that something
   * still listens to, is left to the garbage collector.
   */
  recycle(controller: AbortController): void {
    if (this.#closed || this.#spare.length >= SPARE_CONTROLLERS || controller.signal.aborted) return;
    if (getEventListeners(controller.signal, "abort").length > 0) return;
    this.#spare.push(controller);
  }

  reply(entry: InFlight, result: JsonObject): void {
    if (!this.#release(entry)) return;
    const shaped = resultFor(
      entry.modern ? "modern" : "legacy",
      entry.rounds?.method ?? entry.method,
      result,
      this.#o.serverInfo(),
    );
    this.#afterNotifications(() => this.#o.send({ jsonrpc: "2.0", id: entry.id, result: shaped }, entry.id));
  }

  fail(entry: InFlight, error: unknown): void {
    // A request the host cancelled is not answered (the spec's rule for cancelled requests).
    if (!this.#release(entry)) return;
    const reply = { jsonrpc: "2.0" as const, id: entry.id, error: rpcErrorFor(error, this.#o.redactor) };
    this.#afterNotifications(() => this.#o.send(reply, entry.id));
  }

  /** A request refused before it was taken on: answered at once, never open. */
  error(id: JsonRpcId, error: JsonRpcErrorObject): void {
    this.#o.send({ jsonrpc: "2.0", id, error }, id);
  }

  /**
   * Answers take the entry out of the open requests: the host can no longer cancel it, and a
   * forwarded request's upstream has settled, so its controller is free again.
   */
  #release(entry: InFlight): boolean {
    const key = String(entry.id);
    if (this.#open.get(key) !== entry) return false;
    this.#open.delete(key);
    if (entry.forwarded) this.recycle(entry.controller);
    return true;
  }

  /**
   * The client hands notifications to their handlers a turn of the event loop later; a reply
   * waits that same turn, so what the server sent before its reply (log lines, list changes)
   * reaches the host before it too. Progress goes out as it arrives, through its request's listener.
   */
  #afterNotifications(send: () => void): void {
    setImmediate(send);
  }
}
