/**
 * The front matter of a `SKILL.md` (SEP-2640): the YAML between its first two `---` lines, read as
 * JSON so that it can be compared, field by field, with the `frontmatter` of the skill's entry.
 *
 * Only the YAML that front matter is written in is read: block mappings and sequences (a mapping
 * may start on a sequence item's line), plain scalars (over several lines too), quoted scalars on
 * one line, literal and folded block scalars, one-line flow sequences and mappings, comments; values
 * typed as YAML 1.2's core schema types them. Anything else (anchors, aliases, tags, complex keys,
 * multi-line quotes or flows, a value JSON cannot hold) is refused rather than read differently
 * from the server, so a skill is never loaded on a reading the server did not mean.
 */
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

export class FrontMatterError extends Error {
  override name = "FrontMatterError";
}

/** Deeper nesting than this is refused. */
const MAX_DEPTH = 32;

interface Line {
  /** 1-based, in the file. */
  no: number;
  indent: number;
  /** The line without its indentation. */
  text: string;
  raw: string;
}

const fail = (message: string, line?: Line): never => {
  throw new FrontMatterError(line ? `line ${line.no}: ${message}` : message);
};

/** The front matter of `markdown` as a JSON object. */
export function frontMatterOf(markdown: string): JsonObject {
  let text = markdown.replace(/\r\n/g, "\n");
  if (text.startsWith("\ufeff")) text = text.slice(1);
  if (!text.startsWith("---\n")) fail("SKILL.md does not begin with a --- line");
  const rest = text.slice(4);
  const end = /^---[ \t]*$/m.exec(rest);
  if (!end) fail("the front matter has no closing --- line");
  const raws = rest.slice(0, end!.index).split("\n");
  if (raws.at(-1) === "") raws.pop();
  const lines = raws.map((raw, i): Line => {
    const indent = /^ */.exec(raw)![0].length;
    return { no: i + 2, indent, text: raw.slice(indent), raw };
  });
  const reader = new Reader(lines);
  const first = reader.peek();
  if (!first) return {};
  if (isItem(first.text) || keyOf(first) === undefined) fail("the front matter is not a mapping", first);
  const map = reader.mapping(first.indent, 0);
  const extra = reader.peek();
  if (extra) fail("unexpected text", extra);
  return map;
}

const isItem = (text: string) => text === "-" || text.startsWith("- ");
const blank = (line: Line) => line.text === "" || line.text.startsWith("#");

/** Sets a key as an own property (`__proto__` is data). */
function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

class Reader {
  #at = 0;
  constructor(readonly lines: Line[]) {}

  /** The next line that holds something, skipping blank and comment lines. */
  peek(): Line | undefined {
    while (this.#at < this.lines.length && blank(this.lines[this.#at]!)) this.#at++;
    const line = this.lines[this.#at];
    if (line && line.raw[line.indent] === "\t") fail("tabs cannot indent YAML", line);
    return line;
  }

  mapping(indent: number, depth: number): JsonObject {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
    const map: JsonObject = {};
    for (let line = this.peek(); line && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) fail("unexpected indentation", line);
      if (isItem(line.text)) break;
      const entry = keyOf(line);
      if (!entry) fail('expected "key: value"', line);
      if (Object.hasOwn(map, entry!.key)) fail(`the key "${entry!.key}" appears twice`, line);
      this.#at++;
      setOwn(map, entry!.key, this.value(entry!.rest, line, indent, depth + 1, true));
    }
    return map;
  }

  sequence(indent: number, depth: number): JsonValue[] {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`);
    const items: JsonValue[] = [];
    for (let line = this.peek(); line && line.indent >= indent; line = this.peek()) {
      if (line.indent > indent) fail("unexpected indentation", line);
      if (!isItem(line.text)) break;
      const rest = line.text.slice(1).replace(/^ +/, "");
      const column = line.indent + (line.text.length - rest.length);
      const inner: Line = { ...line, indent: column, text: rest };
      if (rest !== "" && !rest.startsWith("#") && (isItem(rest) || keyOf(inner))) {
        // A collection that starts on the item's own line, at the column after "- ".
        this.lines[this.#at] = inner;
        items.push(isItem(rest) ? this.sequence(column, depth + 1) : this.mapping(column, depth + 1));
        continue;
      }
      this.#at++;
      items.push(this.value(rest, line, indent, depth + 1, false));
    }
    return items;
  }

  /** A value that begins with `rest` on `line`, under a key or item at `indent`. */
  value(rest: string, line: Line, indent: number, depth: number, underKey: boolean): JsonValue {
    if (rest === "" || rest.startsWith("#")) {
      const next = this.peek();
      if (next && next.indent > indent) {
        if (isItem(next.text)) return this.sequence(next.indent, depth);
        if (keyOf(next)) return this.mapping(next.indent, depth);
        this.#at++;
        return this.value(next.text, next, indent, depth, false);
      }
      // `key:` followed by items at the key's own indentation.
      if (underKey && next && next.indent === indent && isItem(next.text))
        return this.sequence(indent, depth);
      return null;
    }
    const c = rest[0]!;
    if (c === "|" || c === ">") return this.block(rest, line, indent);
    if (c === '"' || c === "'") {
      const { value, end } = quoted(rest, 0, line);
      onlyComment(rest.slice(end), line);
      return value;
    }
    if (c === "[" || c === "{") {
      const { value, end } = flow(rest, 0, line, depth);
      onlyComment(rest.slice(end), line);
      return value;
    }
    if ("&*!".includes(c)) fail("anchors, aliases and tags are not read", line);
    if ("%@`,]}?".includes(c) || isItem(rest)) fail(`a plain value cannot start with "${c}"`, line);
    return this.plain(rest, line, indent);
  }

  /** A plain scalar, continued on more-indented lines (each line break a space, a blank line a newline). */
  plain(first: string, line: Line, indent: number): JsonValue {
    let text = uncomment(first, line);
    let ended = first !== text && /[ \t]#/.test(first);
    let blanks = 0;
    while (this.#at < this.lines.length) {
      const next = this.lines[this.#at]!;
      if (next.text === "") {
        blanks++;
        this.#at++;
        continue;
      }
      if (next.indent <= indent || next.text.startsWith("#")) break;
      if (ended) fail("a comment cannot be followed by more of a plain value", next);
      const part = uncomment(next.text, next);
      ended = /[ \t]#/.test(next.text);
      text += blanks > 0 ? "\n".repeat(blanks) : " ";
      text += part;
      blanks = 0;
      this.#at++;
    }
    return typed(text, line);
  }

  /** A literal (`|`) or folded (`>`) block scalar, with its chomping (`-` strip, `+` keep). */
  block(header: string, line: Line, indent: number): string {
    const m = /^([|>])([+-]?)(?:[ \t]+#.*)?[ \t]*$/.exec(header);
    if (!m) fail("a block scalar header other than |, >, |-, >-, |+, >+ is not read", line);
    const content: string[] = [];
    let at = -1;
    while (this.#at < this.lines.length) {
      const next = this.lines[this.#at]!;
      const spaces = next.text === "";
      if (at < 0 && !spaces) {
        if (next.indent <= indent) break;
        at = next.indent;
      }
      if (at >= 0 && !spaces && next.indent < at) break;
      if (!spaces && next.raw[next.indent] === "\t" && next.indent < at)
        fail("tabs cannot indent YAML", next);
      content.push(spaces ? "" : next.raw.slice(at));
      this.#at++;
    }
    let trailing = 0;
    while (content.length > 0 && content.at(-1) === "") {
      content.pop();
      trailing++;
    }
    let body: string;
    if (m![1] === "|") body = content.join("\n");
    else {
      if (content.some((l) => l.startsWith(" ") || l.startsWith("\t")))
        fail("a folded block scalar with more-indented lines is not read", line);
      body = "";
      let breaks = 0;
      for (const [i, l] of content.entries()) {
        if (l === "") {
          breaks++;
          continue;
        }
        if (i > 0) body += breaks > 0 ? "\n".repeat(breaks) : " ";
        body += l;
        breaks = 0;
      }
    }
    if (content.length === 0) return m![2] === "+" ? "\n".repeat(trailing) : "";
    if (m![2] === "-") return body;
    if (m![2] === "+") return `${body}\n${"\n".repeat(trailing)}`;
    return `${body}\n`;
  }
}

/** The key of a `key: value` line and what follows it, or undefined when the line is no such line. */
function keyOf(line: Line): { key: string; rest: string } | undefined {
  const text = line.text;
  const c = text[0];
  if (c === '"' || c === "'") {
    const { value, end } = quoted(text, 0, line);
    const after = text.slice(end);
    if (after !== ":" && !/^:[ \t]/.test(after)) return undefined;
    return { key: value, rest: after.slice(1).trim() };
  }
  if (c === undefined || "[]{}&*!|>%@`#,".includes(c) || isItem(text)) return undefined;
  if (c === "?") fail("complex keys are not read", line);
  const m = /^([^#]*?)[ \t]*:(?:[ \t]+|$)/.exec(text);
  if (!m || m[1] === "" || /[ \t]#/.test(m[1]!)) return undefined;
  if (typeof typed(m[1]!, line) !== "string") fail(`the key "${m[1]}" is not a string; quote it`, line);
  return { key: m[1]!, rest: text.slice(m[0].length).trim() };
}

/** `text` without a trailing comment; a plain value holding ": " is refused (YAML would read a key). */
function uncomment(text: string, line: Line): string {
  const hash = /[ \t]#/.exec(text);
  const value = (hash ? text.slice(0, hash.index) : text).trimEnd();
  if (/:([ \t]|$)/.test(value)) fail('a plain value cannot hold ": "; quote it', line);
  return value;
}

function onlyComment(after: string, line: Line): void {
  if (after.trim() !== "" && !/^[ \t]+#/.test(after)) fail("unexpected text after a value", line);
}

const NUMBER = /^[-+]?(?:\d+|\.\d+|\d+\.\d*)(?:[eE][-+]?\d+)?$/;

/** A plain scalar typed as YAML 1.2's core schema types it. */
function typed(text: string, line: Line): JsonValue {
  if (text === "" || /^(?:~|null|Null|NULL)$/.test(text)) return null;
  if (/^(?:true|True|TRUE)$/.test(text)) return true;
  if (/^(?:false|False|FALSE)$/.test(text)) return false;
  let n: number | undefined;
  if (NUMBER.test(text)) n = Number(text);
  else if (/^0o[0-7]+$/.test(text)) n = Number.parseInt(text.slice(2), 8);
  else if (/^0x[0-9a-fA-F]+$/.test(text)) n = Number.parseInt(text.slice(2), 16);
  else if (/^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$/.test(text)) n = Number.NaN;
  if (n === undefined) return text;
  if (!Number.isFinite(n)) fail(`"${text}" is not a JSON number; quote it`, line);
  return n;
}

const ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\u0007",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\u001b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029",
};
const HEX_DIGITS: Record<string, number> = { x: 2, u: 4, U: 8 };

/** A quoted scalar that starts at `start` and ends on the same line. */
function quoted(text: string, start: number, line: Line): { value: string; end: number } {
  const q = text[start]!;
  let value = "";
  for (let i = start + 1; i < text.length; ) {
    const c = text[i]!;
    if (c === q) {
      if (q === "'" && text[i + 1] === "'") {
        value += "'";
        i += 2;
        continue;
      }
      return { value, end: i + 1 };
    }
    if (q === '"' && c === "\\") {
      const e = text[i + 1] ?? "";
      if (Object.hasOwn(ESCAPES, e)) {
        value += ESCAPES[e];
        i += 2;
        continue;
      }
      const width = HEX_DIGITS[e];
      const hex = width === undefined ? "" : text.slice(i + 2, i + 2 + width);
      if (width === undefined || !new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex))
        fail("an escape in a double-quoted value is not read", line);
      const code = Number.parseInt(hex, 16);
      if (code > 0x10ffff) fail("an escape names no character", line);
      value += String.fromCodePoint(code);
      i += 2 + width!;
      continue;
    }
    value += c;
    i++;
  }
  return fail("a quoted value must end on its line", line);
}

/** A flow sequence or mapping that starts at `start` and ends on the same line. */
function flow(text: string, start: number, line: Line, depth: number): { value: JsonValue; end: number } {
  if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`, line);
  const open = text[start]!;
  const close = open === "[" ? "]" : "}";
  const list: JsonValue[] = [];
  const map: JsonObject = {};
  let i = start + 1;
  const space = () => {
    while (text[i] === " " || text[i] === "\t") i++;
  };
  /** One scalar or nested flow, ending before `,`, `close` or (in a mapping key) `:`. */
  const item = (key: boolean): JsonValue => {
    space();
    const c = text[i];
    if (c === '"' || c === "'") {
      const q = quoted(text, i, line);
      i = q.end;
      return q.value;
    }
    if (c === "[" || c === "{") {
      const f = flow(text, i, line, depth + 1);
      i = f.end;
      return f.value;
    }
    if (c !== undefined && "&*!#".includes(c))
      fail("anchors, aliases, tags and comments are not read in a flow", line);
    const stop = key ? /[,:\]}]|$/ : /[,\]}]|$/;
    const m = stop.exec(text.slice(i))!;
    const raw = text.slice(i, i + m.index).trim();
    i += m.index;
    return typed(raw, line);
  };
  space();
  if (text[i] === close) return { value: open === "[" ? list : map, end: i + 1 };
  for (;;) {
    if (open === "[") list.push(item(false));
    else {
      const key = item(true);
      if (typeof key !== "string") fail("a flow mapping key must be a string", line);
      space();
      if (text[i] !== ":") fail('expected ":" in a flow mapping', line);
      i++;
      if (Object.hasOwn(map, key as string)) fail(`the key "${key}" appears twice`, line);
      setOwn(map, key as string, item(false));
    }
    space();
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text[i] === close) return { value: open === "[" ? list : map, end: i + 1 };
    return fail("a flow collection must end on its line", line);
  }
}

/** Whether two JSON values are equal (the order of object keys aside). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  return (
    ak.length === bk.length &&
    ak.every(
      (k) =>
        Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}
