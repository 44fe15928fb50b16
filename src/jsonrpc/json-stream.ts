/**
 * JSON parsed as its text arrives, for replies too large to hold twice. `JSON.parse` needs the
 * whole text at once and then builds the value beside it, so a reply made of one large string
 * (a file, an image in base64) is held as text and as value together: twice its size, three times
 * while the text is joined. Here each decoded chunk is read and let go: a long string is built
 * from slices of the chunks it spans (the engine keeps such a string as a chain of slices, not a
 * copy), so the text and the value are never both whole.
 *
 * It accepts exactly what `JSON.parse` accepts (RFC 8259, no BOM) and builds the same value
 * (`__proto__` kept as an own key). Nesting past `maxDepth` is not built: such a container, and
 * everything in it, becomes an empty one, only its brackets and strings are followed to find its
 * end (as json-depth's flattenBelow reads a refused frame), and `tooDeep` is reported.
 */

import { LONG_STRING_CHARS, recordPieces } from "./long-strings.ts";

/** Text that is not JSON. */
export class JsonStreamSyntaxError extends Error {
  override readonly name = "JsonStreamSyntaxError";
}

type Container = Record<string, unknown> | unknown[];

interface Frame {
  container: Container;
  /** The key whose value comes next (objects). */
  key: string | undefined;
}

enum S {
  Value,
  /** A value or the `]` of an array just opened. */
  ValueOrClose,
  /** A key or the `}` of an object just opened. */
  KeyOrClose,
  Key,
  Colon,
  /** `,` or the close of the container. */
  After,
  String,
  Escape,
  Unicode,
  Token,
  Skip,
  SkipString,
  SkipEscape,
  Done,
}

const QUOTE_OR_BACKSLASH = /["\\]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw control characters
const CONTROL = /[\u0000-\u001f]/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const TOKEN_CHAR = /[0-9A-Za-z+\-.]/;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class JsonStreamParser {
  readonly #maxDepth: number;
  readonly #stack: Frame[] = [];
  #state: S = S.Value;
  #root: unknown;
  #hasRoot = false;
  /** The string being read, as a chain of slices. */
  #string = "";
  /** The same string's pieces, once it is long (see long-strings.ts). */
  #pieces: string[] | undefined;
  #stringIsKey = false;
  #unicode = "";
  #token = "";
  /** Open brackets inside a container that is not built. */
  #skipDepth = 0;
  #tooDeep = false;

  constructor(maxDepth: number) {
    this.#maxDepth = maxDepth;
  }

  /** Reads the next piece of text; throws JsonStreamSyntaxError as soon as it cannot be JSON. */
  push(text: string): void {
    const n = text.length;
    let i = 0;
    while (i < n) {
      switch (this.#state) {
        case S.String: {
          QUOTE_OR_BACKSLASH.lastIndex = i;
          const hit = QUOTE_OR_BACKSLASH.exec(text);
          const end = hit ? hit.index : n;
          if (end > i) {
            const piece = text.slice(i, end);
            if (CONTROL.test(piece)) this.#fail();
            this.#append(piece);
          }
          if (!hit) return;
          i = end + 1;
          if (hit[0] === "\\") this.#state = S.Escape;
          else this.#endString();
          break;
        }
        case S.Escape: {
          const c = text[i++]!;
          if (c === "u") {
            this.#unicode = "";
            this.#state = S.Unicode;
          } else {
            const e = ESCAPES[c];
            if (e === undefined) this.#fail();
            this.#append(e);
            this.#state = S.String;
          }
          break;
        }
        case S.Unicode: {
          while (i < n && this.#unicode.length < 4) this.#unicode += text[i++];
          if (this.#unicode.length < 4) return;
          if (!/^[0-9A-Fa-f]{4}$/.test(this.#unicode)) this.#fail();
          this.#append(String.fromCharCode(Number.parseInt(this.#unicode, 16)));
          this.#state = S.String;
          break;
        }
        case S.Token: {
          const start = i;
          while (i < n && TOKEN_CHAR.test(text[i]!)) i++;
          this.#token += text.slice(start, i);
          if (i < n) this.#endToken();
          break;
        }
        case S.Skip:
        case S.SkipString:
        case S.SkipEscape:
          i = this.#skip(text, i);
          break;
        default:
          i = this.#structure(text, i);
      }
    }
  }

  /** The whole value, once the text has ended; throws JsonStreamSyntaxError if it is incomplete. */
  end(): { value: unknown; tooDeep: boolean } {
    if (this.#state === S.Token) this.#endToken();
    if (this.#state !== S.Done || !this.#hasRoot) this.#fail();
    return { value: this.#root, tooDeep: this.#tooDeep };
  }

  #fail(): never {
    throw new JsonStreamSyntaxError("the text is not JSON");
  }

  /** Structural characters between values; returns where it stopped. */
  #structure(text: string, i: number): number {
    const n = text.length;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      const state = this.#state;
      if (state === S.Done) this.#fail();
      if (state === S.Colon) {
        if (c !== 0x3a) this.#fail();
        this.#state = S.Value;
        i++;
        continue;
      }
      if (state === S.After) {
        const top = this.#stack.at(-1);
        if (!top) this.#fail();
        const isArray = Array.isArray(top.container);
        if (c === 0x2c) {
          this.#state = isArray ? S.Value : S.Key;
          i++;
          continue;
        }
        if (c === (isArray ? 0x5d : 0x7d)) {
          this.#close();
          i++;
          continue;
        }
        this.#fail();
      }
      if (state === S.Key || state === S.KeyOrClose) {
        if (c === 0x7d && state === S.KeyOrClose) {
          this.#close();
          i++;
          continue;
        }
        if (c !== 0x22) this.#fail();
        this.#string = "";
        this.#stringIsKey = true;
        this.#state = S.String;
        return i + 1;
      }
      // A value (or, in an array just opened, its close).
      if (c === 0x5d && state === S.ValueOrClose) {
        this.#close();
        i++;
        continue;
      }
      if (c === 0x22) {
        this.#string = "";
        this.#stringIsKey = false;
        this.#state = S.String;
        return i + 1;
      }
      if (c === 0x7b || c === 0x5b) {
        const array = c === 0x5b;
        if (this.#stack.length >= this.#maxDepth) {
          // Too deep to build: an empty container stands for it, and its end is looked for.
          this.#tooDeep = true;
          this.#skipDepth = 1;
          this.#emitSkipped = array ? [] : {};
          this.#state = S.Skip;
          return i + 1;
        }
        this.#stack.push({ container: array ? [] : {}, key: undefined });
        this.#state = array ? S.ValueOrClose : S.KeyOrClose;
        i++;
        continue;
      }
      if (TOKEN_CHAR.test(text[i]!)) {
        this.#token = "";
        this.#state = S.Token;
        return i;
      }
      this.#fail();
    }
    return i;
  }

  #emitSkipped: Container = {};

  /** Inside a container that is not built: brackets and strings only, to find its end. */
  #skip(text: string, i: number): number {
    const n = text.length;
    while (i < n) {
      if (this.#state === S.SkipEscape) {
        i++;
        this.#state = S.SkipString;
        continue;
      }
      if (this.#state === S.SkipString) {
        QUOTE_OR_BACKSLASH.lastIndex = i;
        const hit = QUOTE_OR_BACKSLASH.exec(text);
        if (!hit) return n;
        i = hit.index + 1;
        this.#state = hit[0] === "\\" ? S.SkipEscape : S.Skip;
        continue;
      }
      const c = text.charCodeAt(i++);
      if (c === 0x22) this.#state = S.SkipString;
      else if (c === 0x7b || c === 0x5b) this.#skipDepth++;
      else if ((c === 0x7d || c === 0x5d) && --this.#skipDepth === 0) {
        this.#value(this.#emitSkipped);
        return i;
      }
    }
    return i;
  }

  /** Adds to the string being read; a long one's pieces are noted too. */
  #append(piece: string): void {
    if (this.#pieces) this.#pieces.push(piece);
    else if (this.#string.length + piece.length > LONG_STRING_CHARS && !this.#stringIsKey)
      this.#pieces = [this.#string, piece];
    this.#string += piece;
  }

  #endString(): void {
    const s = this.#string;
    const pieces = this.#pieces;
    this.#string = "";
    this.#pieces = undefined;
    if (this.#stringIsKey) {
      this.#stack.at(-1)!.key = s;
      this.#state = S.Colon;
      return;
    }
    const top = this.#stack.at(-1);
    if (pieces && top)
      recordPieces(top.container, Array.isArray(top.container) ? top.container.length : top.key!, pieces);
    this.#value(s);
  }

  #endToken(): void {
    const t = this.#token;
    this.#token = "";
    let v: unknown;
    if (t === "true") v = true;
    else if (t === "false") v = false;
    else if (t === "null") v = null;
    else if (NUMBER.test(t)) v = Number(t);
    else this.#fail();
    this.#value(v);
  }

  #close(): void {
    const frame = this.#stack.pop()!;
    this.#value(frame.container);
  }

  /** A complete value: into its container, or as the root. */
  #value(v: unknown): void {
    const top = this.#stack.at(-1);
    if (!top) {
      this.#root = v;
      this.#hasRoot = true;
      this.#state = S.Done;
      return;
    }
    if (Array.isArray(top.container)) top.container.push(v);
    else {
      const key = top.key!;
      // As JSON.parse does: `__proto__` is an own key, never the prototype.
      if (key === "__proto__")
        Object.defineProperty(top.container, key, {
          value: v,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      else top.container[key] = v;
      top.key = undefined;
    }
    this.#state = S.After;
  }
}
