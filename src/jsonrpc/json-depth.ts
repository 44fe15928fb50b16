/**
 * Nesting depth of JSON text, read from the raw characters before anything is parsed: brackets
 * and braces outside strings, one pass, no recursion, no allocation. A value deeper than a bound
 * is refused here, once, so no code that walks a decoded value recursively ever meets one.
 *
 * For valid JSON the bracket depth is exactly the nesting depth. Invalid text may count oddly
 * (an unbalanced closer, an unterminated string), but JSON.parse refuses such text anyway.
 */

/**
 * Deepest nesting of arrays and objects in one received message, the envelope included (a
 * tool's `structuredContent` sits at level 3). MCP messages are shallow; 128 is the default
 * recursion limit of serde_json (the Rust SDK's parser) and twice System.Text.Json's default
 * (the C# SDK's), so a deeper message already fails elsewhere, and it sits far below the depth
 * at which code that walks a value recursively (redaction, schema validation, JSON.stringify)
 * runs out of stack.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The index of the quote that closes the string opened at `open`, or -1 if it never closes.
 * Jumps from quote to quote (indexOf is fast on long text); a quote preceded by an odd run of
 * backslashes is escaped. Each backslash run is counted once, so the scan stays linear.
 */
function stringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return -1;
    let k = at - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((at - 1 - k) % 2 === 0) return at;
  }
}

/** Whether the text nests arrays and objects more than `maxDepth` levels deep (`{}` is level 1). */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * The same text with every array or object that opens below level `keep` emptied (`[]`, `{}`),
 * so what is left can be parsed without building the deep part. Used only on refused text, to
 * learn which request a too-deep reply answered. Scalars at the kept levels stay as they are.
 */
export function flattenBelow(text: string, keep: number): string {
  const parts: string[] = [];
  let depth = 0;
  let copiedTo = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i === -1) break;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth === keep + 1) {
        parts.push(text.slice(copiedTo, i + 1));
        copiedTo = -1;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === keep + 1) copiedTo = i;
      depth--;
    }
  }
  if (copiedTo !== -1) parts.push(text.slice(copiedTo));
  return parts.join("");
}
