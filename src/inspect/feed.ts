/**
 * What the explorer tells its pages as it happens (state changes, lifecycle events, logs,
 * progress, the message history, the server's questions), as server-sent events. The last items
 * are kept so a page that opens (or reloads) later sees them; everything is redacted before it
 * gets here, and the number of items kept, their size in all and the size of each are bounded.
 */
import type { ServerResponse } from "node:http";
import { SAFE_HEADERS } from "./access.ts";

/** Items kept for a page that opens later, and their size in all. */
const KEPT_ITEMS = 2000;
const KEPT_CHARS = 16 * 1024 * 1024;
/** One item's JSON past this is cut to a notice of its size. */
export const MAX_ITEM_CHARS = 256 * 1024;
/** A page that does not read its stream falls this far behind before it is dropped. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export type FeedItem = { kind: string; server?: string } & Record<string, unknown>;

export class Feed {
  #seq = 0;
  readonly #kept: string[] = [];
  #keptChars = 0;
  readonly #pages = new Set<ServerResponse>();

  /** Hands `item` to every open page, and keeps it for later ones. */
  push(item: FeedItem): void {
    let json = JSON.stringify({ seq: ++this.#seq, at: Date.now(), ...item });
    if (json.length > MAX_ITEM_CHARS)
      json = JSON.stringify({
        seq: this.#seq,
        at: Date.now(),
        kind: "cut",
        of: item.kind,
        chars: json.length,
      });
    const frame = `data: ${json}\n\n`;
    this.#kept.push(frame);
    this.#keptChars += frame.length;
    while (this.#kept.length > KEPT_ITEMS || this.#keptChars > KEPT_CHARS)
      this.#keptChars -= this.#kept.shift()!.length;
    for (const page of this.#pages) this.#write(page, frame);
  }

  /** Serves the stream to one page until it goes away or the explorer closes. */
  open(res: ServerResponse): void {
    res.writeHead(200, {
      ...SAFE_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
    });
    this.#pages.add(res);
    res.on("close", () => this.#pages.delete(res));
    this.#write(res, `: ${this.#kept.length} kept\n\n${this.#kept.join("")}`);
  }

  #write(page: ServerResponse, text: string): void {
    if (page.writableLength > MAX_BUFFERED_BYTES) {
      this.#pages.delete(page);
      page.destroy();
      return;
    }
    page.write(text);
  }

  /** Ends every page's stream. */
  close(): void {
    for (const page of this.#pages) page.end();
    this.#pages.clear();
  }
}
