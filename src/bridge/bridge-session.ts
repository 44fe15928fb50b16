/**
 * One host's conversation with the target, as a dispatcher: the host's messages in, each handed
 * to the part of the bridge that owns it, across the eras. A request carrying the 2026-07-28
 * `_meta` envelope is a modern host's; anything else belongs to a legacy host, which must
 * `initialize` first. The session answers the handshakes itself (`initialize`, `server/discover`)
 * and forwards the rest over the upstream connection, opened on the host's first request.
 *
 * The parts, one job each:
 * - Upstream (upstream.ts): the connection to the target, and its loss.
 * - OpenRequests (open-requests.ts): the host's requests in flight, and their one answer each.
 * - InputRounds (input-rounds.ts): a modern host's `input_required` rounds (the host retries with
 *   the answers; `requestState` names the call still running upstream).
 * - ServerRequests (server-requests.ts): the requests the server sends the host.
 * - NotificationRoutes (notification-routes.ts): the server's notifications to the host, and a
 *   modern host's `subscriptions/listen` streams.
 * - ToolListing (tool-listing.ts): the tool catalog a modern HTTP server's call needs.
 *
 * S4: every message to the host passes one redacting link, made in the constructor and handed to
 * each part. A request that has no counterpart is answered with a JSON-RPC error that says so;
 * nothing is dropped in silence.
 */

import type { CallOptions, Client, Progress } from "../client/api.ts";
import type { Era } from "../errors/codes.ts";
import { protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { UNSUPPORTED_VERSION } from "../errors/rpc-codes.ts";
import type { TetherError } from "../errors/tether-error.ts";
import type { JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from "../jsonrpc/messages.ts";
import { isNotification, isRequest } from "../jsonrpc/messages.ts";
import type { ConnectOptions } from "../options/options.ts";
import { eraOf, isKnownVersion, KNOWN_VERSIONS, LATEST_LEGACY_VERSION } from "../protocol/versions.ts";
import { InputRounds, MRTR_METHODS } from "./input-rounds.ts";
import { NotificationRoutes } from "./notification-routes.ts";
import { type HostLink, type InFlight, OpenRequests } from "./open-requests.ts";
import { ServerRequests } from "./server-requests.ts";
import { ToolListing } from "./tool-listing.ts";
import {
  capabilitiesFor,
  declaredCapabilities,
  INVALID_REQUEST,
  isObject,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  metaOf,
  refusal,
  withoutEnvelope,
} from "./translate.ts";
import { Upstream } from "./upstream.ts";

export type { HostLink } from "./open-requests.ts";

export interface BridgeSessionOptions {
  /** How to reach the target: the bridge adds handlers, clientInfo, listen and its event hook. */
  connect: ConnectOptions;
  link: HostLink;
  redactor: Redactor;
  /** Our own name, for a server that gives none. */
  bridgeInfo: { name: string; version: string };
  /**
   * The session cannot go on: the target could not be reached, or its connection ended on its
   * own. Called once; the holder ends the session (stdio: the command, with the error record).
   */
  onFatal?: (error: TetherError) => void;
}

export class BridgeSession {
  readonly #o: BridgeSessionOptions;
  readonly #upstream: Upstream;
  readonly #open: OpenRequests;
  readonly #rounds: InputRounds;
  readonly #serverRequests: ServerRequests;
  readonly #notifications: NotificationRoutes;
  readonly #tools = new ToolListing();
  /** `legacy` once the host initialized; `modern` once it sent an enveloped request first. */
  #hostEra: Era | undefined;
  #initialized = false;
  #initializing: Promise<JsonObject> | undefined;
  #logLevel: string | undefined;
  #closed = false;

  constructor(options: BridgeSessionOptions) {
    const { link } = options;
    // S4: every message to the host (results, listings, instructions, logs, progress, requests
    // forwarded to it, errors) passes the result rule on its way out, here and nowhere else: the
    // parts below are handed this one redacting `send`, never the holder's link.
    this.#o = { ...options, link: { send: (message, related) => link.send(this.#redact(message), related) } };
    const send = this.#o.link.send;
    this.#open = new OpenRequests({
      send,
      redactor: options.redactor,
      serverInfo: () => {
        const client = this.#upstream.ready;
        return client ? this.#upstream.serverInfo(client) : undefined;
      },
    });
    this.#rounds = new InputRounds(this.#open, send);
    this.#serverRequests = new ServerRequests({
      send,
      open: this.#open,
      rounds: this.#rounds,
      modernHost: () => this.#hostEra === "modern",
    });
    this.#notifications = new NotificationRoutes({
      send,
      open: this.#open,
      hostEra: () => this.#hostEra,
      initialized: () => this.#initialized,
    });
    this.#upstream = new Upstream({
      connect: options.connect,
      redactor: options.redactor,
      bridgeInfo: options.bridgeInfo,
      handlers: (caps) => this.#serverRequests.handlers(caps),
      onNotification: (n) => this.#serverNotification(n),
      onFatal: options.onFatal,
    });
  }

  /**
   * A message with the credentials removed: by the upstream connection's redactor once it is
   * up (it holds ours too, and the OAuth tokens met since), by ours before.
   */
  #redact<T>(message: T): T {
    const ready = this.#upstream.ready;
    return ready ? ready.redact(message) : this.#o.redactor.redactDocument(message);
  }

  /** Requests the host has not yet been answered on. */
  get pending(): number {
    return this.#open.size;
  }

  /** One message from the host. */
  receive(message: JsonRpcMessage): void {
    if (this.#closed) return;
    if (isRequest(message)) {
      void this.#request(message);
      return;
    }
    if (isNotification(message)) {
      void this.#notification(message);
      return;
    }
    // A response to a request we sent the host.
    this.#serverRequests.answer(message);
  }

  /** Ends the session: every host request still open is abandoned, and the upstream closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const reason = "the host went away";
    this.#open.close(reason);
    this.#rounds.close(reason);
    this.#serverRequests.close(reason);
    await this.#upstream.close();
  }

  // ---- host requests ----

  async #request(req: JsonRpcRequest): Promise<void> {
    const meta = metaOf(req.params);
    const version = meta[META_PROTOCOL_VERSION];
    const modern = typeof version === "string";
    if (this.#open.has(req.id)) {
      this.#open.error(
        req.id,
        refusal(INVALID_REQUEST, "duplicate_id", "a request with this id is still open"),
      );
      return;
    }
    if (modern) {
      if (!isKnownVersion(version) || eraOf(version) !== "modern") {
        this.#open.error(req.id, {
          code: UNSUPPORTED_VERSION,
          message: "unsupported protocol version",
          data: {
            supported: KNOWN_VERSIONS.filter((v) => eraOf(v) === "modern"),
            requested: String(version),
          },
        });
        return;
      }
      this.#hostEra ??= "modern";
      if (!this.#upstream.started)
        this.#upstream.learnHost(declaredCapabilities(req.params), meta[META_CLIENT_INFO]);
    }
    const entry: InFlight = {
      id: req.id,
      method: req.method,
      modern,
      controller: this.#open.controller(),
      logs: modern && typeof meta[META_LOG_LEVEL] === "string",
    };
    // A modern host's retry of a request that asked it something continues that request.
    if (modern && this.#rounds.resume(req, entry)) return;
    this.#open.add(entry);
    try {
      const result = await this.#dispatch(req, entry);
      if (result !== undefined) this.#open.reply(entry, result);
    } catch (error) {
      this.#open.fail(entry, error);
    }
  }

  /** Runs one host request to its result (undefined: answered elsewhere, or held open). */
  async #dispatch(req: JsonRpcRequest, entry: InFlight): Promise<JsonObject | undefined> {
    const params = req.params;
    if (req.method === "initialize") {
      this.#initializing ??= this.#initialize(params);
      return this.#initializing;
    }
    // A host that sends on without waiting for initialize's answer waits for it here.
    if (!entry.modern && !this.#initialized) await this.#initializing?.catch(() => {});
    if (!entry.modern && !this.#initialized && req.method !== "ping" && req.method !== "server/discover")
      throw protocolError(
        { stage: "call", phase: "call" },
        "not_initialized",
        "the host sent a request before initialize",
      );
    // Once connected, the client is at hand: no await (and no turn of the event loop) per request.
    const client = this.#upstream.ready ?? (await this.#upstream.client());
    const signal = entry.controller.signal;
    if (entry.modern) {
      const level = metaOf(params)[META_LOG_LEVEL];
      if (typeof level === "string" && level !== this.#logLevel)
        await this.#followLogLevel(client, level, signal);
    }
    switch (req.method) {
      case "server/discover":
        return this.#discover(client);
      case "ping":
        await client.ping({ signal });
        return {};
      case "logging/setLevel": {
        const level = params?.level;
        await client.setLoggingLevel(level as never, { signal });
        this.#logLevel = typeof level === "string" ? level : undefined;
        return {};
      }
      case "resources/subscribe":
        await client.subscribeResource(String(params?.uri ?? ""), { signal });
        return {};
      case "resources/unsubscribe":
        await client.unsubscribeResource(String(params?.uri ?? ""), { signal });
        return {};
      case "subscriptions/listen":
        return this.#notifications.listen(client, entry, params);
    }
    const forwarded = withoutEnvelope(params);
    if (req.method === "tools/call") await this.#tools.beforeCall(client, forwarded?.name);
    const options = this.#forwardOptions(entry, forwarded);
    entry.forwarded = true;
    if (entry.modern && MRTR_METHODS.has(req.method)) {
      this.#rounds.start(client, req, entry, forwarded, options);
      return undefined;
    }
    return client.request(req.method, forwarded, options);
  }

  /**
   * The options of one forwarded request: the host's cancellation, and, when the host asked for
   * progress, a progress listener. The client then asks the server with a token of its own (so
   * the session knows the notifications are solicited), the bridge hands each one to the host
   * under the host's token, and each restarts the call clock: `--call-timeout` bounds the silence
   * between notifications and ten times it the whole call, as for a direct call made with
   * `resetTimeoutOnProgress`. A request without a token runs on the plain call budget.
   */
  #forwardOptions(entry: InFlight, params: JsonObject | undefined): CallOptions {
    const signal = entry.controller.signal;
    const token = metaOf(params).progressToken;
    if (typeof token !== "string" && typeof token !== "number") return { signal };
    return {
      signal,
      resetTimeoutOnProgress: true,
      onProgress: (p) => this.#progress(entry, token, p),
    };
  }

  /** One progress notification of a forwarded request, to the host under the host's own token. */
  #progress(entry: InFlight, token: string | number, p: Progress): void {
    // A request the host cancelled hears nothing more.
    if (this.#closed || entry.controller.signal.aborted) return;
    const params: JsonObject = { progressToken: token, progress: p.progress };
    if (p.total !== undefined) params.total = p.total;
    if (p.message !== undefined) params.message = p.message;
    const related = entry.rounds ? (entry.rounds.carrier ?? entry.id) : entry.id;
    this.#o.link.send({ jsonrpc: "2.0", method: "notifications/progress", params }, related);
  }

  /** A legacy host's handshake: the target is reached first, so its answer is the server's. */
  async #initialize(params: JsonObject | undefined): Promise<JsonObject> {
    if (this.#initialized)
      throw protocolError(
        { stage: "call", phase: "call" },
        "already_initialized",
        "initialize was already sent",
      );
    this.#upstream.learnHost(isObject(params?.capabilities) ? params.capabilities : {}, params?.clientInfo);
    const client = await this.#upstream.client();
    this.#initialized = true;
    this.#hostEra = "legacy";
    const asked = params?.protocolVersion;
    const version = isKnownVersion(asked) && eraOf(asked) === "legacy" ? asked : LATEST_LEGACY_VERSION;
    const result: JsonObject = {
      protocolVersion: version,
      capabilities: capabilitiesFor("legacy", client.era, client.serverCapabilities),
      serverInfo: this.#upstream.serverInfo(client),
    };
    if (client.instructions !== undefined) result.instructions = client.instructions;
    return result;
  }

  #discover(client: Client): JsonObject {
    const result: JsonObject = {
      supportedVersions: [...KNOWN_VERSIONS],
      capabilities: capabilitiesFor("modern", client.era, client.serverCapabilities),
      ttlMs: 0,
      cacheScope: "private",
    };
    if (client.instructions !== undefined) result.instructions = client.instructions;
    return result;
  }

  /** A modern host's log level, carried to the server when it changes (legacy: `logging/setLevel`). */
  async #followLogLevel(client: Client, level: string, signal: AbortSignal): Promise<void> {
    if (client.era === "legacy" && !isObject(client.serverCapabilities.logging)) return;
    await client.setLoggingLevel(level as never, { signal });
    this.#logLevel = level;
  }

  // ---- host notifications ----

  async #notification(n: JsonRpcNotification): Promise<void> {
    switch (n.method) {
      case "notifications/initialized":
        return;
      case "notifications/cancelled": {
        const id = n.params?.requestId;
        const entry = id === undefined ? undefined : this.#open.get(id);
        if (!entry) return;
        this.#open.delete(entry.id);
        entry.controller.abort(new Error("cancelled by the host"));
        if (entry.listen) await this.#notifications.endListen(this.#upstream.ready, entry);
        return;
      }
    }
    const client = this.#upstream.ready;
    if (!client) return;
    // The host's own news (roots changed, say) reaches a server of an era that knows it.
    if (client.era === "modern" && n.method === "notifications/roots/list_changed") return;
    await client.notify(n.method, withoutEnvelope(n.params)).catch(() => {});
  }

  // ---- server notifications ----

  #serverNotification(n: { method: string; params: JsonObject }): void {
    if (this.#closed) return;
    this.#notifications.forward(n);
  }
}
