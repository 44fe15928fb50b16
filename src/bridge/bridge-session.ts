/**
 * One host's conversation with the target: the host's messages in, the server's out, across the
 * eras. The upstream side is a tether client (connect(): budgets, ceilings, recovery, OAuth,
 * scrubbed errors); the host side speaks whichever era each message is in. A request carrying
 * the 2026-07-28 `_meta` envelope is a modern host's; anything else belongs to a legacy host,
 * which must `initialize` first. The client is connected on the host's first request, with
 * handlers for exactly what the host said it can answer (sampling, elicitation, roots).
 *
 * Server-to-host requests reach a legacy host as JSON-RPC requests, and a modern host as an
 * `input_required` result on the request they belong to (the host retries with the answers;
 * `requestState` names the call still running upstream). A request that has no counterpart is
 * answered with a JSON-RPC error that says so; nothing is dropped in silence.
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
  META_SUBSCRIPTION_ID,
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

/** Notifications a modern host receives only on a `subscriptions/listen` stream that asked for them. */
const LISTEN_FILTER: Record<string, string> = {
  "notifications/tools/list_changed": "toolsListChanged",
  "notifications/prompts/list_changed": "promptsListChanged",
  "notifications/resources/list_changed": "resourcesListChanged",
};

export class BridgeSession {
  readonly #o: BridgeSessionOptions;
  readonly #upstream: Upstream;
  /** `legacy` once the host initialized; `modern` once it sent an enveloped request first. */
  #hostEra: Era | undefined;
  #initialized = false;
  #initializing: Promise<JsonObject> | undefined;
  readonly #open: OpenRequests;
  readonly #rounds: InputRounds;
  readonly #serverRequests: ServerRequests;
  #logLevel: string | undefined;
  #closed = false;
  readonly #tools = new ToolListing();

  constructor(options: BridgeSessionOptions) {
    const { link } = options;
    // S4: every message to the host (results, listings, instructions, logs, progress, requests
    // forwarded to it, errors) passes the result rule on its way out, here and nowhere else.
    this.#o = { ...options, link: { send: (message, related) => link.send(this.#redact(message), related) } };
    this.#open = new OpenRequests({
      send: this.#o.link.send,
      redactor: options.redactor,
      serverInfo: () => {
        const client = this.#upstream.ready;
        return client ? this.#upstream.serverInfo(client) : undefined;
      },
    });
    this.#rounds = new InputRounds(this.#open, this.#o.link.send);
    this.#serverRequests = new ServerRequests({
      send: this.#o.link.send,
      open: this.#open,
      rounds: this.#rounds,
      modernHost: () => this.#hostEra === "modern",
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
    this.#open.close("the host went away");
    this.#rounds.close("the host went away");
    this.#serverRequests.close("the host went away");
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
        return this.#listen(client, entry, params);
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

  /**
   * A modern host's `subscriptions/listen` in front of a legacy server: the list changes the
   * server announces anyway, and resource updates through `resources/subscribe`. The request
   * stays open until the host cancels it or the session ends.
   */
  async #listen(client: Client, entry: InFlight, params: JsonObject | undefined): Promise<undefined> {
    if (client.era === "modern")
      throw protocolError(
        { stage: "call", phase: "call", effect: "none" },
        "not_in_era",
        "subscriptions/listen is not carried to a 2026-07-28 server by this bridge",
      );
    const asked = isObject(params?.notifications) ? params.notifications : {};
    const caps = client.serverCapabilities;
    const ack: JsonObject = {};
    const listChanged = (k: string) => isObject(caps[k]) && (caps[k] as JsonObject).listChanged === true;
    if (asked.toolsListChanged === true && listChanged("tools")) ack.toolsListChanged = true;
    if (asked.promptsListChanged === true && listChanged("prompts")) ack.promptsListChanged = true;
    if (asked.resourcesListChanged === true && listChanged("resources")) ack.resourcesListChanged = true;
    const uris: string[] = [];
    const subscribable = isObject(caps.resources) && (caps.resources as JsonObject).subscribe === true;
    if (Array.isArray(asked.resourceSubscriptions) && subscribable) {
      for (const uri of asked.resourceSubscriptions) {
        if (typeof uri !== "string") continue;
        await client.subscribeResource(uri, { signal: entry.controller.signal });
        uris.push(uri);
      }
      ack.resourceSubscriptions = uris;
    }
    entry.listen = { filter: ack, uris };
    this.#o.link.send(
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [META_SUBSCRIPTION_ID]: entry.id }, notifications: ack },
      },
      entry.id,
    );
    return undefined;
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
        if (entry.listen) await this.#endListen(entry);
        return;
      }
    }
    const client = this.#upstream.ready;
    if (!client) return;
    // The host's own news (roots changed, say) reaches a server of an era that knows it.
    if (client.era === "modern" && n.method === "notifications/roots/list_changed") return;
    await client.notify(n.method, withoutEnvelope(n.params)).catch(() => {});
  }

  async #endListen(entry: InFlight): Promise<void> {
    const client = this.#upstream.ready;
    if (!client || !entry.listen) return;
    for (const uri of entry.listen.uris) await client.unsubscribeResource(uri).catch(() => {});
  }

  // ---- server notifications ----

  #serverNotification(n: { method: string; params: JsonObject }): void {
    if (this.#closed) return;
    const message: JsonRpcNotification = { jsonrpc: "2.0", method: n.method, params: n.params };
    // Progress reaches the host through the listener of the request it belongs to (#progress):
    // the tokens upstream are the client's own, never the host's.
    if (n.method === "notifications/cancelled" || n.method === "notifications/progress") return;
    if (this.#hostEra !== "modern") {
      // The client's own listen stream (a modern server) is its business; its tag is not the host's.
      if (n.method === "notifications/subscriptions/acknowledged" || !this.#initialized) return;
      this.#o.link.send({ ...message, params: withoutTag(n.params) }, this.#open.sole());
      return;
    }
    if (n.method === "notifications/message") {
      const asker = [...this.#open.values()].find((f) => f.logs);
      if (asker) this.#o.link.send(message, asker.id);
      return;
    }
    const filterKey = LISTEN_FILTER[n.method];
    for (const f of this.#open.values()) {
      if (!f.listen) continue;
      const wanted =
        filterKey !== undefined
          ? f.listen.filter[filterKey] === true
          : n.method === "notifications/resources/updated" && f.listen.uris.includes(String(n.params.uri));
      if (!wanted) continue;
      this.#o.link.send(
        { ...message, params: { ...n.params, _meta: { ...metaOf(n.params), [META_SUBSCRIPTION_ID]: f.id } } },
        f.id,
      );
    }
  }
}

/** A notification's params without a subscription tag of the bridge's own upstream stream. */
function withoutTag(params: JsonObject): JsonObject {
  if (!isObject(params._meta) || !(META_SUBSCRIPTION_ID in params._meta)) return params;
  const meta = { ...params._meta };
  delete meta[META_SUBSCRIPTION_ID];
  const out = { ...params };
  if (Object.keys(meta).length === 0) delete out._meta;
  else out._meta = meta;
  return out;
}
