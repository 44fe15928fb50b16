/**
 * The one sanitizer for text bound for a terminal. Server text (names, descriptions, results,
 * URIs, messages) may carry sequences a terminal would act on: ESC/CSI/OSC sequences (clipboard
 * writes, screen clears, hyperlinks, title changes), C1 controls (some terminals treat U+009B as
 * CSI), carriage returns and backspaces that overwrite what was printed, and bidirectional
 * controls that reorder what is shown. Nothing of that is ever interpreted: every such character
 * becomes its escape, spelled in visible ASCII, and the text around it stays as it was.
 *
 * The rule, exactly:
 * - C0 controls (U+0000-U+001F), DEL (U+007F) and C1 controls (U+0080-U+009F) become `\xHH`
 *   (lowercase hex, four visible characters: ESC is `\x1b`, a lone CR `\x0d`, BS `\x08`),
 *   except the three whitespace controls below.
 * - Bidirectional embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069) and the
 *   line and paragraph separators (U+2028, U+2029) become `\uHHHH`.
 * - CR LF counts as one line break. A line break (LF, or CR LF) is kept in a block and becomes
 *   one space on a line; a CR on its own never returns the cursor: it is shown as `\x0d`.
 * - A tab becomes spaces: to the next multiple of 8 columns in a block, one space on a line.
 * - Everything else passes unchanged, including the bidirectional marks LRM, RLM and ALM
 *   (U+200E, U+200F, U+061C): they change no embedding level, only how neutral characters next
 *   to them lean, and legitimate right-to-left text uses them.
 *
 * Escapes, not the Control Pictures block (U+241B and friends): one spelling covers C0, C1 and
 * the bidirectional controls alike, and it reads the same on any font. Our own colour codes are
 * added after sanitizing, never before.
 */

const TAB_STOP = 8;

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /\r\n|[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Characters JSON.stringify leaves raw that a terminal may act on; always inside JSON strings. */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeOf(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Tabs to spaces up to the next tab stop, counted from the start of each line. */
function expandTabs(text: string): string {
  if (!text.includes("\t")) return text;
  return text
    .split("\n")
    .map((line) => {
      let out = "";
      for (const [i, chunk] of line.split("\t").entries()) {
        if (i > 0) out += " ".repeat(TAB_STOP - (out.length % TAB_STOP));
        out += chunk;
      }
      return out;
    })
    .join("\n");
}

/**
 * Text that is meant to be one line (a name, a description, a table cell, a message): line
 * breaks and tabs become single spaces, every other control becomes visible.
 */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE, (ch) => (ch === "\r\n" || ch === "\n" || ch === "\t" ? " " : escapeOf(ch)));
}

/**
 * Text whose lines are legitimate (a call's text, a resource's text, a prompt's messages):
 * line breaks are kept (CR LF becomes LF), tabs become spaces, every other control becomes visible.
 */
export function terminalBlock(text: string): string {
  return expandTabs(
    text.replace(UNSAFE, (ch) => (ch === "\r\n" || ch === "\n" ? "\n" : ch === "\t" ? "\t" : escapeOf(ch))),
  );
}

/**
 * A JSON document safe to write to a terminal and still exact: JSON.stringify already escapes
 * C0 controls, and the characters it leaves raw that a terminal may act on (DEL, C1, the
 * bidirectional controls, the line and paragraph separators) can only occur inside strings, so
 * writing them as `\uHHHH` there gives a valid document that parses to the same value.
 */
export function terminalJson(value: unknown, indent?: number): string {
  const text = JSON.stringify(value, null, indent) ?? "null";
  return text.replace(JSON_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
