/**
 * The session's connection to the target: a tether client (connect(): budgets, ceilings,
 * recovery, OAuth, scrubbed errors), opened once on the host's first request with what the host
 * said of itself (its capabilities become the client's handlers, its name the client's name), and
 * closed with the session. Losing it, or failing to open it, ends the session (onFatal).
 */

import type { Client } from "../client/api.ts";
import { connect } from "../connect/connect.ts";
import { closedError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { asTetherError, type TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { ClientHandlers } from "../options/handlers.ts";
import type { ConnectOptions } from "../options/options.ts";
import { isObject } from "./translate.ts";

export interface UpstreamOptions {
  /** How to reach the target: handlers, clientInfo, listen and the event hook are added here. */
  connect: ConnectOptions;
  redactor: Redactor;
  /** Our own name, for a server that gives none. */
  bridgeInfo: { name: string; version: string };
  /** The client's handlers for the capabilities the host declared. */
  handlers: (hostCaps: JsonObject) => ClientHandlers;
  /** Every notification the server sends. */
  onNotification: (n: { method: string; params: JsonObject }) => void;
  /** Called once when the connection cannot be opened, or ended on its own. */
  onFatal?: (error: TetherError) => void;
}

export class Upstream {
  readonly #o: UpstreamOptions;
  #client: Promise<Client> | undefined;
  #ready: Client | undefined;
  #hostCaps: JsonObject = {};
  #clientInfo: { name: string; version: string } | undefined;
  #closed = false;
  #fatal = false;
  /** The server's name as replies to a modern host carry it, made once per connection. */
  #serverInfoMeta: JsonObject | undefined;

  constructor(options: UpstreamOptions) {
    this.#o = options;
  }

  /** The client once connected: at hand without an await (and no turn of the event loop). */
  get ready(): Client | undefined {
    return this.#ready;
  }

  /** The connection was asked for: what the host says of itself from now on changes nothing. */
  get started(): boolean {
    return this.#client !== undefined;
  }

  /** What the host said of itself (its capabilities, its name), for the connection still to open. */
  learnHost(caps: JsonObject, info: unknown): void {
    if (this.#client) return;
    this.#hostCaps = caps;
    if (isObject(info) && typeof info.name === "string")
      this.#clientInfo = { name: info.name, version: typeof info.version === "string" ? info.version : "0" };
  }

  /** The client, opened on the first call. */
  client(): Promise<Client> {
    this.#client ??= this.#open();
    return this.#client;
  }

  /** The server's name, or ours for a server that gives none. */
  serverInfo(client: Client): JsonObject {
    this.#serverInfoMeta ??= this.#describeServer(client);
    return this.#serverInfoMeta;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    if (client) await client.then((c) => c.close()).catch(() => {});
  }

  async #open(): Promise<Client> {
    let established = false;
    const o = this.#o.connect;
    try {
      const client = await connect({
        ...o,
        secrets: [...(o.secrets ?? []), ...this.#o.redactor.secrets],
        handlers: this.#o.handlers(this.#hostCaps),
        clientInfo: this.#clientInfo ?? o.clientInfo,
        listen: true,
        onEvent: (event) => {
          o.onEvent?.(event);
          if (established && event.type === "closed" && event.closure !== "closed_by_client")
            this.#lost(
              closedError({ stage: "call", phase: "call" }, event.closure, "the server's connection ended"),
            );
        },
      });
      established = true;
      this.#ready = client;
      client.onNotification("*", (n) => this.#o.onNotification(n));
      if (this.#closed) await client.close();
      return client;
    } catch (error) {
      this.#lost(asTetherError(error, { stage: "config", phase: "discovery", redactor: this.#o.redactor }));
      throw error;
    }
  }

  #lost(error: TetherError): void {
    if (this.#fatal || this.#closed) return;
    this.#fatal = true;
    // The requests still open are answered by their own failures; the holder ends the session after.
    // Two turns later: the replies this failure causes (each a turn after its cause) go out first.
    setImmediate(() => setImmediate(() => this.#o.onFatal?.(error)));
  }

  #describeServer(client: Client): JsonObject {
    const info = client.serverInfo;
    return info && typeof info.name === "string"
      ? { name: info.name, version: info.version ?? "0" }
      : { ...this.#o.bridgeInfo };
  }
}
