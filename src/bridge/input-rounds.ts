/**
 * The 2026-07-28 `input_required` rounds: how a modern host is asked what the server asks during
 * one of its requests. The questions go out as an `input_required` result on the host request
 * that carries the call (its carrier), with a `requestState` token naming the call still running
 * upstream; the host's retry with that token brings the answers and carries what comes next (the
 * next round, or the result). An outcome that arrives between rounds waits for the retry.
 */

import { randomUUID } from "node:crypto";
import type { CallOptions, Client } from "../client/api.ts";
import { protocolError } from "../errors/failures.ts";
import type { JsonObject, JsonRpcRequest } from "../jsonrpc/messages.ts";
import type { HostLink, InFlight, OpenRequests, Rounds } from "./open-requests.ts";
import { declaredCapabilities, INVALID_REQUEST, isObject, refusal } from "./translate.ts";

/** Requests a modern server may answer with `input_required`, and so a modern host may be asked through. */
export const MRTR_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** How long an upstream outcome waits for the modern host's retry that would carry it. */
const UNCLAIMED_ROUND_MS = 5 * 60 * 1000;

export class InputRounds {
  readonly #open: OpenRequests;
  readonly #send: HostLink["send"];
  /** The calls a round went out for, by their `requestState` token, until the host's retry claims the outcome. */
  readonly #byToken = new Map<string, Rounds>();

  /** `send` is the session's one redacting link to the host. */
  constructor(open: OpenRequests, send: HostLink["send"]) {
    this.#open = open;
    this.#send = send;
  }

  /** Forwards a modern host's request whose server may ask the host something on the way. */
  start(
    client: Client,
    req: JsonRpcRequest,
    entry: InFlight,
    params: JsonObject | undefined,
    options: CallOptions,
  ): void {
    const rounds: Rounds = {
      token: undefined,
      carrier: req.id,
      caps: declaredCapabilities(req.params),
      asked: new Map(),
      controller: entry.controller,
      method: req.method,
    };
    entry.rounds = rounds;
    client.request(req.method, params, options).then(
      (result) => this.#settle(rounds, { result }),
      (error) => this.#settle(rounds, { error }),
    );
  }

  /** A modern host's retry of a request that asked it something continues that request: true when this one does. */
  resume(req: JsonRpcRequest, entry: InFlight): boolean {
    const state = req.params?.requestState;
    const rounds = typeof state === "string" ? this.#byToken.get(state) : undefined;
    if (!rounds) return false;
    this.#continue(req, entry, rounds);
    return true;
  }

  /**
   * A modern host answers only in a round of the request the question belongs to. The bridge
   * knows which one when exactly one such request is running; otherwise the server is refused.
   * `nextKey` names the question in the round.
   */
  ask(method: string, params: JsonObject, signal: AbortSignal, nextKey: () => string): Promise<JsonObject> {
    const running = [
      ...new Set([...this.#open.values()].map((f) => f.rounds).filter((r) => r !== undefined)),
    ];
    const rounds = running.length === 1 ? running[0]! : undefined;
    if (!rounds)
      return Promise.reject(
        protocolError(
          { stage: "call", phase: "call" },
          "input_unroutable",
          "the server asked the host for input outside a request the host can answer it in",
        ),
      );
    const capability =
      method === "sampling/createMessage" ? "sampling" : method === "roots/list" ? "roots" : "elicitation";
    if (!isObject(rounds.caps[capability]))
      return Promise.reject(
        protocolError(
          { stage: "call", phase: "call" },
          "input_unsupported",
          "the host did not declare that capability",
        ),
      );
    return new Promise<JsonObject>((resolve, reject) => {
      const key = nextKey();
      const onAbort = () => {
        rounds.asked.delete(key);
        reject(signal.reason);
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      rounds.asked.set(key, {
        method,
        params,
        sent: false,
        resolve: (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      });
      // Questions asked together go out in one round.
      queueMicrotask(() => this.#flush(rounds));
    });
  }

  /** The host went away: every call still waiting for a round is cancelled upstream. */
  close(reason: string): void {
    for (const r of this.#byToken.values()) r.controller.abort(new Error(reason));
  }

  /** The upstream request ended: its carrier gets the outcome, or the next retry will. */
  #settle(rounds: Rounds, outcome: { result?: JsonObject; error?: unknown }): void {
    for (const a of rounds.asked.values()) a.reject(new Error("the request ended"));
    rounds.asked.clear();
    if (rounds.carrier === undefined) {
      rounds.settled = outcome;
      // A host that never retries does not keep the outcome alive for ever.
      const token = rounds.token;
      if (token !== undefined) setTimeout(() => this.#byToken.delete(token), UNCLAIMED_ROUND_MS).unref();
      return;
    }
    this.#deliver(rounds, outcome);
  }

  #deliver(rounds: Rounds, outcome: { result?: JsonObject; error?: unknown }): void {
    if (rounds.token !== undefined) this.#byToken.delete(rounds.token);
    const entry = this.#open.get(rounds.carrier);
    if (!entry) return;
    if (outcome.result !== undefined) this.#open.reply(entry, outcome.result);
    else this.#open.fail(entry, outcome.error);
  }

  /** The host's retry: its answers go to the waiting server requests, and it carries what comes next. */
  #continue(req: JsonRpcRequest, entry: InFlight, rounds: Rounds): void {
    if (rounds.carrier !== undefined) {
      this.#open.error(
        req.id,
        refusal(INVALID_REQUEST, "request_state_in_use", "that request is still running"),
      );
      return;
    }
    entry.rounds = rounds;
    // The retry's own controller was never used: the running request's is the one that cancels.
    this.#open.recycle(entry.controller);
    entry.controller = rounds.controller;
    this.#open.add(entry);
    rounds.carrier = req.id;
    const responses = isObject(req.params?.inputResponses) ? req.params.inputResponses : {};
    for (const [key, asked] of rounds.asked) {
      if (!asked.sent) continue;
      rounds.asked.delete(key);
      const answer = responses[key];
      if (isObject(answer)) asked.resolve(answer);
      else
        asked.reject(
          protocolError({ stage: "call", phase: "call" }, "input_missing", "the host gave no answer"),
        );
    }
    if (rounds.settled) {
      this.#deliver(rounds, rounds.settled);
      return;
    }
    this.#flush(rounds);
  }

  /** Sends the questions not yet asked to the carrier as an `input_required` result. */
  #flush(rounds: Rounds): void {
    if (rounds.carrier === undefined) return;
    const inputRequests: JsonObject = {};
    for (const [key, asked] of rounds.asked) {
      if (asked.sent) continue;
      asked.sent = true;
      inputRequests[key] = { method: asked.method, params: asked.params };
    }
    if (Object.keys(inputRequests).length === 0) return;
    const carrier = this.#open.get(rounds.carrier);
    rounds.carrier = undefined;
    if (!carrier) return;
    if (rounds.token === undefined) {
      rounds.token = `tether-bridge-${randomUUID()}`;
      this.#byToken.set(rounds.token, rounds);
    }
    this.#open.delete(carrier.id);
    this.#send(
      {
        jsonrpc: "2.0",
        id: carrier.id,
        result: { resultType: "input_required", inputRequests, requestState: rounds.token },
      },
      carrier.id,
    );
  }
}
