/**
 * Keeps the client's tool catalog fit for a bridged tool call. A 2026-07-28 HTTP server reads the
 * arguments a tool marks with `x-mcp-header` from `Mcp-Param-*` headers too, and refuses a call
 * without them. The client mirrors them from its tool catalog, as it does for a direct call; the
 * catalog is filled by a listing, so the bridge lists the tools before a call when the client
 * holds no listing (at the start, and after the server said its tools changed) or when the
 * listing it holds lacks the tool called (one the server added since; a modern server need not
 * say so). A name the current listing was seen to lack does not list again until there is a new
 * listing. A listing that fails leaves the call to go as it is. The listing serves every call
 * waiting for it, so no one host request's cancellation ends it; the discovery budget bounds it.
 */

import type { Client } from "../client/api.ts";
import type { Tool } from "../client/results.ts";

export class ToolListing {
  /** The one tool listing under way for the client's catalog. */
  #listing: Promise<void> | undefined;
  /** Tool names called that this listing was seen to lack. */
  #unlisted: { listing: readonly Tool[] | undefined; names: Set<string> } = {
    listing: undefined,
    names: new Set(),
  };

  /** Resolves once the catalog is as current as it needs to be for a call of the tool `name`. */
  async beforeCall(client: Client, name: unknown): Promise<void> {
    if (client.era !== "modern" || client.transportMode === "stdio") return;
    const known = client.cachedTools;
    if (known !== this.#unlisted.listing) this.#unlisted = { listing: known, names: new Set() };
    if (known !== undefined) {
      if (typeof name !== "string" || this.#unlisted.names.has(name)) return;
      if (known.some((tool) => tool.name === name)) return;
    }
    this.#listing ??= client.listTools().then(
      () => {},
      () => {},
    );
    const listing = this.#listing;
    await listing;
    if (this.#listing === listing) this.#listing = undefined;
    const now = client.cachedTools;
    if (typeof name === "string" && now !== undefined && !now.some((tool) => tool.name === name)) {
      if (now !== this.#unlisted.listing) this.#unlisted = { listing: now, names: new Set() };
      this.#unlisted.names.add(name);
    }
  }
}
