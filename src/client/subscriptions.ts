import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { JsonObject, JsonRpcId, JsonRpcNotification } from "../jsonrpc/messages.ts";
import type { Session } from "../jsonrpc/session.ts";
import { raceAbort, sleep } from "../lifecycle/abort.ts";
import { CallClock } from "../lifecycle/call-clock.ts";
import type { Clock } from "../lifecycle/clock.ts";
import { LIMITS } from "../options/limits.ts";
import type { ListKind, OperationOptions } from "./api.ts";
import type { RequestPath, Route } from "./request-path.ts";
import { isObject } from "./shapes.ts";

/** What a 2026-07-28 listen stream carries: the spec's SubscriptionFilter. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** Where a notification on a listen stream names the stream (the listen request's JSON-RPC id). */
export const SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId";
/** The first message on every listen stream: the part of the filter the server agreed to. */
export const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

const LIST_FLAG: Record<ListKind, "toolsListChanged" | "promptsListChanged" | "resourcesListChanged"> = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
};

/**
 * How long one listen stream stays open before it is replaced by a fresh one (the longest budget
 * any wait may have): the stream is long-lived by design, and still no wait is unbounded.
 */
const STREAM_LIFETIME_MS = LIMITS.timeoutMs.max;
/** Reopening after a stream dropped without the server's closing result: how often in a row, and the first wait. */
const MAX_REOPENS = 3;
const REOPEN_DELAY_MS = 500;
/** Ids of replaced streams remembered, so a notification still in flight on one is not delivered twice. */
const RETIRED_IDS = 16;

const LISTEN_ROUTE: Route = { stage: "call", phase: "call", effect: "none" };

interface Stream {
  requested: ListenFilter;
  /** The acknowledged filter, once the server sent it. */
  honored: ListenFilter | undefined;
  id: JsonRpcId | undefined;
  readonly controller: AbortController;
  /** Called with the acknowledgement; settles the wait in `#open`. */
  acknowledge: () => void;
  /** Set once the stream is over, for whatever reason. */
  ended: boolean;
}

export interface SubscriptionsDeps {
  session: Session;
  path: RequestPath;
  clock: Clock;
  /** Ceiling for each listen stream's messages, and for a stream's bytes before it is renewed. */
  maxFrameBytes: number;
  redactor: Redactor;
  /** What the server said it can announce (`capabilities.<kind>.listChanged`). */
  serverCapabilities: JsonObject;
}

/**
 * Server-initiated notifications in 2026-07-28, where a server sends list changes and resource
 * updates only on a `subscriptions/listen` stream the client opened, and only the kinds it asked
 * for. One stream at a time carries everything wanted: the list changes someone listens for (and
 * the server announces) and every subscribed resource. A change of what is wanted opens a new
 * stream, waits for its acknowledgement, then closes the old one, so nothing falls between them;
 * notifications from a closed stream still in flight are dropped by `admits`.
 *
 * The stream is a request that stays pending: it goes out through the request path's envelope
 * (`_meta`, headers), is bounded by its own clock and the frame ceiling, and is cancelled by
 * closing its reply stream (HTTP) or `notifications/cancelled` (stdio). A stream that drops
 * without the server's closing result is reopened a few times; one the server closed is not.
 */
export class Subscriptions {
  readonly #d: SubscriptionsDeps;
  readonly #kinds = new Set<ListKind>();
  readonly #uris = new Set<string>();
  readonly #life = new AbortController();
  readonly #retired: JsonRpcId[] = [];
  #current: Stream | undefined;
  /** The stream being opened, waiting for its acknowledgement. */
  #opening: Stream | undefined;
  /** Changes of the stream run one at a time, in order. */
  #queue: Promise<unknown> = Promise.resolve();
  #reopens = 0;
  readonly #off: () => void;

  constructor(deps: SubscriptionsDeps) {
    this.#d = deps;
    this.#off = deps.session.notifications.add((n) => this.#acknowledged(n));
  }

  /**
   * Someone listens for changes of this list: from now on the stream asks for them, if the server
   * announces them at all. Opening happens in the background; a failure leaves the list unheard,
   * as a legacy server that never sends the notification would.
   */
  wantList(kind: ListKind): void {
    if (this.#kinds.has(kind) || !this.#announces(kind)) return;
    this.#kinds.add(kind);
    const bounds = this.#d.path.bounds("call", {});
    this.#reconcile(bounds.clock.signal)
      .catch(() => {})
      .finally(() => bounds.clock.dispose());
  }

  /**
   * Adds `uri` to the stream, within the operation's budget: resolves once the server has
   * acknowledged a stream that carries it. A server that leaves it out of its acknowledgement
   * does not offer resource subscriptions: `remote_error` / `subscription_refused`.
   */
  subscribe(uri: string, options: OperationOptions): Promise<void> {
    return this.#d.path.bounded(LISTEN_ROUTE, options, async (bounds, sent) => {
      const added = !this.#uris.has(uri);
      this.#uris.add(uri);
      sent();
      try {
        const stream = await this.#reconcile(bounds.clock.signal);
        if (!stream?.honored?.resourceSubscriptions?.includes(uri)) throw this.#refused();
      } catch (error) {
        if (added) this.#uris.delete(uri);
        throw error;
      }
    });
  }

  /** Takes `uri` off the stream (closing it when nothing else is wanted). */
  unsubscribe(uri: string, options: OperationOptions): Promise<void> {
    return this.#d.path.bounded(LISTEN_ROUTE, options, async (bounds, sent) => {
      if (!this.#uris.delete(uri)) return;
      sent();
      await this.#reconcile(bounds.clock.signal);
    });
  }

  /**
   * Whether a notification should reach the application: not an acknowledgement (the stream's
   * own bookkeeping, like a response), nor one from a stream already replaced.
   */
  admits(n: JsonRpcNotification): boolean {
    if (n.method === ACKNOWLEDGED) return false;
    const id = subscriptionIdOf(n);
    return id === undefined || !this.#retired.includes(id);
  }

  /** Closes every stream; nothing is reopened after this. */
  close(): void {
    this.#life.abort();
    this.#off();
    this.#current?.controller.abort();
    this.#opening?.controller.abort();
  }

  // ---- internals ----

  #announces(kind: ListKind): boolean {
    const capability = this.#d.serverCapabilities[kind];
    return isObject(capability) && capability.listChanged === true;
  }

  #wanted(): ListenFilter {
    const filter: ListenFilter = {};
    for (const kind of this.#kinds) filter[LIST_FLAG[kind]] = true;
    if (this.#uris.size > 0) filter.resourceSubscriptions = [...this.#uris];
    return filter;
  }

  /** Brings the open stream in line with what is wanted; one change at a time. */
  #reconcile(signal: AbortSignal): Promise<Stream | undefined> {
    const run = this.#queue.then(() => this.#apply(signal));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #apply(signal: AbortSignal): Promise<Stream | undefined> {
    if (signal.aborted) throw signal.reason;
    const wanted = this.#wanted();
    const current = this.#current;
    if (current && !current.ended && sameFilter(current.requested, wanted)) return current;
    if (isEmpty(wanted)) {
      if (current) this.#retire(current);
      this.#current = undefined;
      return undefined;
    }
    const next = await this.#open(wanted, signal);
    this.#current = next;
    this.#reopens = 0;
    if (current) this.#retire(current);
    return next;
  }

  /** Opens one stream and waits (within `signal`) for its acknowledgement. */
  async #open(filter: ListenFilter, signal: AbortSignal): Promise<Stream> {
    if (this.#life.signal.aborted) throw this.#d.session.closure ?? this.#life.signal.reason;
    let acknowledge!: () => void;
    const acknowledged = new Promise<void>((resolve) => {
      acknowledge = resolve;
    });
    const stream: Stream = {
      requested: filter,
      honored: undefined,
      id: undefined,
      controller: new AbortController(),
      acknowledge,
      ended: false,
    };
    this.#opening = stream;
    const clock = new CallClock(
      this.#d.clock,
      STREAM_LIFETIME_MS,
      STREAM_LIFETIME_MS,
      stream.controller.signal,
    );
    const reply = this.#d.path.send(
      "subscriptions/listen",
      { notifications: toJson(filter) },
      { clock, maxBytes: this.#d.maxFrameBytes },
      LISTEN_ROUTE,
    );
    // Whatever ends the stream (the server's closing result, a drop, our own abort) ends it once.
    const over = reply.then(
      () => this.#ended(stream, "graceful"),
      () => this.#ended(stream, "dropped"),
    );
    void over.finally(() => clock.dispose());
    try {
      await raceAbort(
        Promise.race([
          acknowledged,
          // A reply before the acknowledgement is a refusal (or the server ending it at once).
          reply.then(() => {
            throw this.#refused();
          }),
        ]),
        signal,
      );
      return stream;
    } catch (error) {
      stream.controller.abort();
      throw error;
    } finally {
      if (this.#opening === stream) this.#opening = undefined;
    }
  }

  /** The acknowledgement of the stream being opened: the first one with an id we have not seen. */
  #acknowledged(n: JsonRpcNotification): void {
    if (n.method !== ACKNOWLEDGED) return;
    const stream = this.#opening;
    if (!stream || stream.honored) return;
    const id = subscriptionIdOf(n);
    if (id !== undefined && (id === this.#current?.id || this.#retired.includes(id))) return;
    stream.id = id;
    stream.honored = filterOf(n.params?.notifications);
    stream.acknowledge();
  }

  #ended(stream: Stream, how: "graceful" | "dropped"): void {
    if (stream.ended) return;
    stream.ended = true;
    // Only the live stream is renewed, only after a drop, and only while the client is open.
    if (stream !== this.#current || how === "graceful" || stream.controller.signal.aborted) return;
    if (this.#life.signal.aborted || this.#d.session.closure) return;
    if (this.#reopens >= MAX_REOPENS) return;
    const wait = REOPEN_DELAY_MS * 2 ** this.#reopens++;
    void sleep(this.#d.clock, wait, this.#life.signal)
      .then(() => {
        const bounds = this.#d.path.bounds("call", {});
        return this.#reconcile(bounds.clock.signal).finally(() => bounds.clock.dispose());
      })
      .catch(() => {});
  }

  #retire(stream: Stream): void {
    if (stream.id !== undefined) {
      this.#retired.push(stream.id);
      if (this.#retired.length > RETIRED_IDS) this.#retired.shift();
    }
    stream.controller.abort();
  }

  #refused(): TetherError {
    return new TetherError({
      code: "remote_error",
      reason: "subscription_refused",
      stage: "call",
      phase: "call",
      message: "the server did not take the resource subscription on its listen stream",
      effect: "none",
      redactor: this.#d.redactor,
    });
  }
}

function subscriptionIdOf(n: JsonRpcNotification): JsonRpcId | undefined {
  const meta = n.params?._meta;
  if (!isObject(meta)) return undefined;
  const id = meta[SUBSCRIPTION_ID_META];
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The acknowledged filter, keeping only well-formed fields. */
function filterOf(value: unknown): ListenFilter {
  if (!isObject(value)) return {};
  const filter: ListenFilter = {};
  for (const flag of Object.values(LIST_FLAG)) if (value[flag] === true) filter[flag] = true;
  const uris = value.resourceSubscriptions;
  if (Array.isArray(uris)) filter.resourceSubscriptions = uris.filter((u) => typeof u === "string");
  return filter;
}

function toJson(filter: ListenFilter): JsonObject {
  const out: JsonObject = {};
  for (const flag of Object.values(LIST_FLAG)) if (filter[flag]) out[flag] = true;
  if (filter.resourceSubscriptions) out.resourceSubscriptions = [...filter.resourceSubscriptions];
  return out;
}

function isEmpty(filter: ListenFilter): boolean {
  return Object.keys(filter).length === 0;
}

function sameFilter(a: ListenFilter, b: ListenFilter): boolean {
  const uris = (f: ListenFilter) => [...(f.resourceSubscriptions ?? [])].sort().join("\n");
  return Object.values(LIST_FLAG).every((flag) => a[flag] === b[flag]) && uris(a) === uris(b);
}
