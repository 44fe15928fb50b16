import { createHash } from "node:crypto";

/** What a listing does with the `nextCursor` a page handed it. */
export type CursorVerdict = "follow" | "too_long" | "repeated";

/**
 * The cursors one listing has followed, kept as fixed-size digests: a server that hands back a
 * cursor it already gave would loop forever, and remembering the cursors themselves would let it
 * grow our memory by whatever it puts in them. A cursor longer than the bound is never followed
 * (nor hashed). A listing makes a new trail.
 */
export class CursorTrail {
  readonly #maxChars: number;
  readonly #seen = new Set<string>();

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /**
   * Judges the next cursor and, when it is to be followed, remembers it. The digest covers the
   * string's UTF-16 code units, so no two distinct cursors (lone surrogates included) share one.
   */
  admit(cursor: string): CursorVerdict {
    if (cursor.length > this.#maxChars) return "too_long";
    const digest = createHash("sha256").update(cursor, "utf16le").digest("base64");
    if (this.#seen.has(digest)) return "repeated";
    this.#seen.add(digest);
    return "follow";
  }
}
