/**
 * Where the server's notifications reach the host. A legacy host (once initialized) gets each on
 * the stream of its one open request, or its standalone stream. A modern host gets log messages
 * on the request that asked for them, and the rest only on the `subscriptions/listen` streams
 * that asked for them: streams this class opens in front of a legacy server (list changes the
 * server announces anyway, resource updates through `resources/subscribe`) and closes. Progress
 * is not routed here: it reaches the host through the listener of the request it belongs to.
 */

import type { Client } from "../client/api.ts";
import type { Era } from "../errors/codes.ts";
import { protocolError } from "../errors/failures.ts";
import type { JsonObject, JsonRpcNotification } from "../jsonrpc/messages.ts";
import type { HostLink, InFlight, OpenRequests } from "./open-requests.ts";
import { isObject, META_SUBSCRIPTION_ID, metaOf } from "./translate.ts";

/** Notifications a modern host receives only on a `subscriptions/listen` stream that asked for them. */
const LISTEN_FILTER: Record<string, string> = {
  "notifications/tools/list_changed": "toolsListChanged",
  "notifications/prompts/list_changed": "promptsListChanged",
  "notifications/resources/list_changed": "resourcesListChanged",
};

export interface NotificationRoutesOptions {
  /** The session's one redacting link to the host. */
  send: HostLink["send"];
  open: OpenRequests;
  /** `legacy` once the host initialized; `modern` once it sent an enveloped request first. */
  hostEra: () => Era | undefined;
  /** A legacy host's `initialize` was answered. */
  initialized: () => boolean;
}

export class NotificationRoutes {
  readonly #o: NotificationRoutesOptions;

  constructor(options: NotificationRoutesOptions) {
    this.#o = options;
  }

  /** One notification from the server, to where the host expects it, or nowhere. */
  forward(n: { method: string; params: JsonObject }): void {
    const message: JsonRpcNotification = { jsonrpc: "2.0", method: n.method, params: n.params };
    // Progress reaches the host through the listener of the request it belongs to:
    // the tokens upstream are the client's own, never the host's.
    if (n.method === "notifications/cancelled" || n.method === "notifications/progress") return;
    if (this.#o.hostEra() !== "modern") {
      // The client's own listen stream (a modern server) is its business; its tag is not the host's.
      if (n.method === "notifications/subscriptions/acknowledged" || !this.#o.initialized()) return;
      this.#o.send({ ...message, params: withoutTag(n.params) }, this.#o.open.sole());
      return;
    }
    if (n.method === "notifications/message") {
      const asker = [...this.#o.open.values()].find((f) => f.logs);
      if (asker) this.#o.send(message, asker.id);
      return;
    }
    const filterKey = LISTEN_FILTER[n.method];
    for (const f of this.#o.open.values()) {
      if (!f.listen) continue;
      const wanted =
        filterKey !== undefined
          ? f.listen.filter[filterKey] === true
          : n.method === "notifications/resources/updated" && f.listen.uris.includes(String(n.params.uri));
      if (!wanted) continue;
      this.#o.send(
        { ...message, params: { ...n.params, _meta: { ...metaOf(n.params), [META_SUBSCRIPTION_ID]: f.id } } },
        f.id,
      );
    }
  }

  /**
   * A modern host's `subscriptions/listen` in front of a legacy server: the list changes the
   * server announces anyway, and resource updates through `resources/subscribe`. The request
   * stays open until the host cancels it or the session ends.
   */
  async listen(client: Client, entry: InFlight, params: JsonObject | undefined): Promise<undefined> {
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
    this.#o.send(
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [META_SUBSCRIPTION_ID]: entry.id }, notifications: ack },
      },
      entry.id,
    );
    return undefined;
  }

  /** A listen stream the host cancelled: its resource subscriptions end upstream. */
  async endListen(client: Client | undefined, entry: InFlight): Promise<void> {
    if (!client || !entry.listen) return;
    for (const uri of entry.listen.uris) await client.unsubscribeResource(uri).catch(() => {});
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
