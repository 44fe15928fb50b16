/**
 * The requests the server sends the host (sampling, elicitation, roots), for exactly what the host
 * said it can answer. A legacy host gets each as a JSON-RPC request of the bridge's own, on the
 * stream of the request it belongs to, and answers with a response; one the server no longer
 * needs is cancelled to the host. A modern host is asked in an `input_required` round of the
 * request the question belongs to (InputRounds).
 */

import { protocolError } from "../errors/failures.ts";
import type { JsonObject, JsonRpcErrorObject, JsonRpcMessage } from "../jsonrpc/messages.ts";
import { isFailure } from "../jsonrpc/messages.ts";
import type { ClientHandlers, HandlerContext } from "../options/handlers.ts";
import type { InputRounds } from "./input-rounds.ts";
import type { HostLink, OpenRequests } from "./open-requests.ts";
import { isObject } from "./translate.ts";

/** Numbers the bridge's own requests to hosts (and the questions of modern rounds), across sessions. */
let bridgeRequests = 0;

export interface ServerRequestsOptions {
  /** The session's one redacting link to the host. */
  send: HostLink["send"];
  open: OpenRequests;
  rounds: InputRounds;
  /** The host spoke 2026-07-28 first (an enveloped request): it is asked in rounds. */
  modernHost: () => boolean;
}

export class ServerRequests {
  readonly #o: ServerRequestsOptions;
  /** Requests sent to a legacy host, by id, until it answers. */
  readonly #waiting = new Map<string, { resolve: (r: JsonObject) => void; reject: (e: unknown) => void }>();

  constructor(options: ServerRequestsOptions) {
    this.#o = options;
  }

  /** Handlers for what the host declared it can answer: each server request goes to the host. */
  handlers(caps: JsonObject): ClientHandlers {
    const ask = (method: string) => (params: JsonObject, context: HandlerContext) =>
      this.#ask(method, params, context.signal);
    const handlers: ClientHandlers = {};
    if (isObject(caps.sampling)) handlers.sampling = ask("sampling/createMessage");
    if (isObject(caps.elicitation)) {
      handlers.elicitation = ask("elicitation/create");
      // URL mode (SEP-1036) passes through only when the host declared it; form mode is what an
      // empty declaration means, and what a host naming modes names with `form`.
      const e = caps.elicitation;
      if (isObject(e.url)) handlers.elicitationModes = isObject(e.form) ? ["form", "url"] : ["url"];
    }
    if (isObject(caps.roots)) handlers.roots = (context) => this.#ask("roots/list", {}, context.signal);
    return handlers;
  }

  /** A response from the host: the answer to a request of ours, or nothing we wait for. */
  answer(message: JsonRpcMessage): void {
    if (!("id" in message) || message.id === null) return;
    const waiter = this.#waiting.get(String(message.id));
    if (!waiter) return;
    this.#waiting.delete(String(message.id));
    if (isFailure(message)) waiter.reject(hostRefusal(message.error));
    else if ("result" in message) waiter.resolve(message.result);
    else waiter.reject(new Error("the host's answer was refused"));
  }

  /** The host went away: every request still waiting for its answer fails. */
  close(reason: string): void {
    for (const w of this.#waiting.values()) w.reject(new Error(reason));
    this.#waiting.clear();
  }

  #ask(method: string, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (this.#o.modernHost()) return this.#o.rounds.ask(method, params, signal, () => `q${++bridgeRequests}`);
    const id = `tether-bridge-${++bridgeRequests}`;
    const related = this.#o.open.sole();
    return new Promise<JsonObject>((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.delete(id);
        this.#o.send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "no longer needed" },
        });
        reject(signal.reason);
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      const done = () => signal.removeEventListener("abort", onAbort);
      this.#waiting.set(id, {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      this.#o.send({ jsonrpc: "2.0", id, method, params }, related);
    });
  }
}

/** A host's JSON-RPC error to our request, as the failure the server is answered with. */
function hostRefusal(error: JsonRpcErrorObject): Error {
  return protocolError({ stage: "call", phase: "call" }, "host_refused", `the host refused (${error.code})`);
}
