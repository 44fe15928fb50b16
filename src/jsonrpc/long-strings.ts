/**
 * The pieces a long string was read in. The streaming parser keeps a long string as a chain of
 * slices of the text chunks it spans, so that a 200 MB reply is not held twice; but anything
 * that reads such a string through (a regular expression, `slice`, a socket write) first makes
 * the engine copy the chain into one flat string, twice the memory while both exist. Whoever
 * must go through such a string in order (the redactor, the session process writing a frame)
 * asks here for its pieces instead, by the object or array it stands in and its key there (a
 * string is no WeakMap key; its holder is). Nothing is kept beyond the holder's life.
 */

/** Strings shorter than this are never recorded: copying them costs nothing worth saving. */
export const LONG_STRING_CHARS = 1024 * 1024;

const recorded = new WeakMap<object, Map<string | number, readonly string[]>>();

/** Notes that `holder[key]` was read in these pieces (in order, joined it is the string). */
export function recordPieces(holder: object, key: string | number, pieces: readonly string[]): void {
  const at = recorded.get(holder) ?? new Map<string | number, readonly string[]>();
  recorded.set(holder, at);
  at.set(key, pieces);
}

/**
 * The pieces `holder[key]` was read in, when it is still the string they make (a key written over
 * since has none): the pieces' total length must still be the value's.
 */
export function piecesAt(holder: object, key: string | number): readonly string[] | undefined {
  const pieces = recorded.get(holder)?.get(key);
  if (!pieces) return undefined;
  const value = (holder as Record<string | number, unknown>)[key];
  if (typeof value !== "string") return undefined;
  let length = 0;
  for (const p of pieces) length += p.length;
  return length === value.length ? pieces : undefined;
}
