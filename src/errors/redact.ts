import { terminalLine } from "./terminal-text.ts";

/**
 * Scrubbing of text that may carry secrets: the one place that knows what a secret looks like.
 * A Redactor holds the secrets one client (or one CLI run) was configured with and the ones it
 * learns later (OAuth tokens), and applies two rules, for two kinds of text:
 *
 * - Messages (`scrub`, `messageText`, `serverText`): what we say about a failure, the server's
 *   error text, `--debug` causes. X2 says they never carry URLs, credentials or environment
 *   values, so here every known secret of 4 characters or more goes (the configured ones and the
 *   ambient ones, see below), every http, https, ws and wss URL becomes `[url]` (its host may be
 *   private and its query may hold a key), the userinfo of any other URI becomes `[redacted]`,
 *   and a credential after an auth scheme word (`Bearer`, `Basic`, `Token`) goes when it looks
 *   like one (see `credentialShaped`), so "no token is stored" stays a sentence. Other URIs
 *   (`file:///home/x/notes.md`, `demo://resource/1`) stay: they name the user's own things.
 * - Result output (`redactSecrets`, `redactDocument`): what the server returned, shown as a
 *   table, text or `--json` document. Nothing is the client's to judge there except its own
 *   secrets: every configured secret of 8 characters or more (S4), in the forms a server echoes
 *   it back in (as is, URL-encoded, base64, base64url), becomes `[redacted]`; nothing else
 *   changes, so ordinary words and the user's URIs stay readable and a document stays exact
 *   apart from the secret. Shorter secrets would match ordinary words in content.
 *
 * Ambient values (the CLI's own environment, which a stdio server inherits) are scrubbed from
 * messages only: most are paths and settings that results legitimately mention.
 */

const NETWORK_URL_PATTERN = /\b(?:https?|wss?):\/\/[^\s"'<>)]*/gi;
/** `scheme://userinfo@` of any other URI; userinfo cannot hold `/`, `?` or `#`. */
const USERINFO_PATTERN = /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^\s"'<>/?#@]+@/g;
/** A credential never ends in a full stop, so a sentence's last word keeps it. */
const AUTH_SCHEME_PATTERN = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-])/gi;
const REDACTED = "[redacted]";
/** Server text shown to users is cut to this many characters (after redaction). */
export const MAX_SERVER_TEXT_CHARS = 300;
/** Secrets shorter than this are not searched for in messages: they would match ordinary words. */
const MIN_SECRET_CHARS = 4;
/** Secrets shorter than this are not searched for in result output (S4). */
export const MIN_OUTPUT_SECRET_CHARS = 8;

/**
 * Whether the word after an auth scheme is a credential rather than prose: 8 characters or more
 * and something a word does not have: a digit, one of `+/=._~`, or a capital letter after the
 * first character (base64 of `user:pass` has no digit but mixes case). A hyphen alone does not
 * count: "Bearer authentication-required" is prose.
 */
function credentialShaped(value: string): boolean {
  return value.length >= 8 && (/[0-9+/=._~]/.test(value) || /[A-Z]/.test(value.slice(1)));
}

/** Fewest bytes of a secret whose base64 is searched for inside a longer encoded text. */
const MIN_BASE64_CORE_BYTES = 6;

/** Both base64 alphabets of some bytes, without padding. */
function base64Forms(bytes: Buffer, into: Set<string>): void {
  const b64 = bytes.toString("base64").replace(/=+$/, "");
  into.add(b64);
  into.add(b64.replace(/\+/g, "-").replace(/\//g, "_"));
}

/**
 * A secret and the forms servers echo it back in:
 * - as is; URL-encoded (`encodeURIComponent`, and form encoding with `+` for a space);
 * - JSON-escaped (a server that puts what it received into a JSON string of its text: quotes,
 *   backslashes and controls escaped; `/` as `\/`; non-ASCII as `\uXXXX`, as Python and PHP do);
 * - base64 and base64url: the whole secret, and, for each of the three places a secret can start
 *   inside a longer encoded text (its offset modulo 3), the run of its bytes that encodes to the
 *   same characters wherever it stands. So `base64("auth=Bearer " + secret)` loses the secret too,
 *   apart from at most two bytes at either end, which no longer say what the secret was.
 */
function formsOf(secrets: Iterable<string>, minChars: number): Set<string> {
  const all = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== "string" || s.length < minChars) continue;
    all.add(s);
    all.add(encodeURIComponent(s));
    all.add(new URLSearchParams({ s }).toString().slice(2));
    const json = JSON.stringify(s).slice(1, -1);
    all.add(json);
    all.add(json.replace(/\//g, "\\/"));
    all.add(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
    const bytes = Buffer.from(s, "utf8");
    base64Forms(bytes, all);
    for (const skip of [0, 1, 2]) {
      const whole = Math.floor((bytes.length - skip) / 3) * 3;
      if (whole >= MIN_BASE64_CORE_BYTES) base64Forms(bytes.subarray(skip, skip + whole), all);
    }
  }
  return all;
}

/**
 * One pattern that finds every form in a single pass over a text, longest alternative first so
 * that a secret containing another is removed whole; undefined when there is nothing to find.
 */
function matcherOf(forms: Iterable<string>): RegExp | undefined {
  const sorted = [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return undefined;
  return new RegExp(sorted.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
}

/** The text with every match replaced; the same string when there is none (no copy is made). */
function replaceAll(text: string, matcher: RegExp | undefined): string {
  if (matcher === undefined) return text;
  matcher.lastIndex = 0;
  return text.replace(matcher, REDACTED);
}

/** Cuts to `max` UTF-16 units without splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * Where a long string's pieces can be found, by the object or array holding it and its key there
 * (the streaming parser records them): redaction then reads them one by one instead of making
 * the engine copy the whole string first.
 */
export type PiecesLookup = (holder: object, key: string | number) => readonly string[] | undefined;

export interface RedactorOptions {
  /** Values scrubbed from messages only, never from result output (the CLI's environment). */
  ambient?: Iterable<string>;
}

export class Redactor {
  #secrets: string[];
  #ambient: string[];
  /** Finds every form searched for in messages. */
  #messageMatcher: RegExp | undefined;
  /** Finds every form searched for in result output. */
  #outputMatcher: RegExp | undefined;
  /** The longest and the shortest of those forms, in characters. */
  #outputLongest = 0;
  #outputShortest = 0;

  constructor(secrets: Iterable<string> = [], options: RedactorOptions = {}) {
    this.#secrets = [...secrets].filter((s) => typeof s === "string");
    this.#ambient = [...(options.ambient ?? [])].filter((s) => typeof s === "string");
    this.#index();
  }

  #index(): void {
    this.#messageMatcher = matcherOf(formsOf([...this.#secrets, ...this.#ambient], MIN_SECRET_CHARS));
    const output = formsOf(this.#secrets, MIN_OUTPUT_SECRET_CHARS);
    this.#outputMatcher = matcherOf(output);
    const lengths = [...output].map((f) => f.length);
    this.#outputLongest = Math.max(0, ...lengths);
    this.#outputShortest = Math.min(...lengths);
  }

  /** A redactor that also knows these secrets. */
  with(secrets: Iterable<string>): Redactor {
    return new Redactor([...this.#secrets, ...secrets], { ambient: this.#ambient });
  }

  /**
   * Teaches this redactor secrets obtained after it was made (OAuth tokens, codes, verifiers,
   * assertions), so that every holder of it scrubs them from then on. Learn before the secret
   * is sent or received, so no error made afterwards can carry it.
   */
  learn(secrets: Iterable<string>): void {
    const fresh = [...secrets].filter(
      (s) => typeof s === "string" && s.length >= MIN_SECRET_CHARS && !this.#secrets.includes(s),
    );
    if (fresh.length === 0) return;
    this.#secrets.push(...fresh);
    this.#index();
  }

  /** For messages: removes known secrets (ambient ones too), network URLs, URI userinfo and auth-scheme credentials. */
  scrub(text: string): string {
    return replaceAll(text, this.#messageMatcher)
      .replace(NETWORK_URL_PATTERN, "[url]")
      .replace(USERINFO_PATTERN, `$1${REDACTED}@`)
      .replace(AUTH_SCHEME_PATTERN, (whole, scheme: string, space: string, value: string) =>
        credentialShaped(value) ? `${scheme}${space}${REDACTED}` : whole,
      );
  }

  /** A message for a record or a terminal: scrubbed, then one line with every control visible. */
  messageText(text: string): string {
    return terminalLine(this.scrub(text)).trim();
  }

  /** Server-supplied text in a message (`rpcMessage`, an offered version): `messageText`, truncated. */
  serverText(text: unknown): string | undefined {
    if (typeof text !== "string") return undefined;
    return cut(this.messageText(text), MAX_SERVER_TEXT_CHARS);
  }

  /** For result output: only configured secrets of 8 characters or more, in their echoed forms. */
  redactSecrets(text: string): string {
    // Most strings of a message (keys, types, ids) are shorter than any form: nothing to search.
    return text.length < this.#outputShortest ? text : replaceAll(text, this.#outputMatcher);
  }

  /**
   * The configured and learned secrets (not the ambient values): for handing to a connection
   * made on this redactor's behalf (`ConnectOptions.secrets`), so that the connection redacts
   * what it hands back with them. Never for output.
   */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /**
   * A result document with `redactSecrets` applied to every string in it, keys included; the
   * structure is rebuilt, never re-parsed, so the document stays exact apart from the secrets.
   */
  redactDocument<T>(value: T, piecesAt?: PiecesLookup): T {
    if (this.#outputMatcher === undefined) return value;
    return this.#walk(value, 0, piecesAt) as T;
  }

  /** The value with its strings redacted; a branch in which nothing changed is returned as it is. */
  #walk(value: unknown, depth: number, piecesAt: PiecesLookup | undefined): unknown {
    if (typeof value === "string") return this.redactSecrets(value);
    // Results arrive through a depth-bounded decoder; this bound only guards against cycles.
    if (typeof value !== "object" || value === null || depth > 1_000) return value;
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = this.#child(value, i, value[i], depth, piecesAt);
        if (v === value[i]) continue;
        out ??= value.slice();
        out[i] = v;
      }
      return out ?? value;
    }
    const record = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k in record) {
      if (!Object.hasOwn(record, k)) continue;
      const v = record[k];
      const key = this.redactSecrets(k);
      const w = this.#child(record, k, v, depth, piecesAt);
      if (key === k && w === v && out === undefined) continue;
      if (out === undefined) {
        // Rebuilt in the original key order from the first change on.
        out = {};
        for (const k0 in record) {
          if (k0 === k) break;
          if (Object.hasOwn(record, k0)) out[k0] = record[k0];
        }
      }
      out[key] = w;
    }
    return out ?? value;
  }

  /** One member: a long string read in pieces is searched piece by piece. */
  #child(
    holder: object,
    key: string | number,
    v: unknown,
    depth: number,
    piecesAt: PiecesLookup | undefined,
  ): unknown {
    if (typeof v === "string") {
      const pieces = piecesAt && v.length > this.#outputLongest ? piecesAt(holder, key) : undefined;
      return pieces ? this.#redactPieces(v, pieces) : this.redactSecrets(v);
    }
    return this.#walk(v, depth + 1, piecesAt);
  }

  /**
   * A long string read in pieces (see PiecesLookup), searched piece by piece, each with the end
   * of the one before it (a secret may straddle two): when no piece holds a secret the string is
   * returned as it is, never copied whole. Only a string that has a secret is rebuilt.
   */
  #redactPieces(whole: string, pieces: readonly string[]): string {
    const matcher = this.#outputMatcher;
    if (matcher === undefined) return whole;
    const keep = this.#outputLongest - 1;
    let carry = "";
    for (const piece of pieces) {
      matcher.lastIndex = 0;
      if (matcher.test(carry + piece)) return this.redactSecrets(whole);
      carry = piece.length >= keep ? piece.slice(piece.length - keep) : (carry + piece).slice(-keep);
    }
    return whole;
  }
}

/** Knows no configured secrets, but still strips network URLs and auth-scheme credentials. */
export const baseRedactor = new Redactor();

/**
 * The values in a header map and a URL that count as secrets: header values (and the credential
 * after an auth scheme, and a Basic credential's decoded `user:password` and password), URL
 * userinfo and query values.
 */
export function secretsOf(url: URL | undefined, headers: Record<string, string> | undefined): string[] {
  const out: string[] = [];
  if (headers) {
    for (const value of Object.values(headers)) {
      if (typeof value !== "string") continue;
      out.push(value);
      const scheme = /^\s*(\S+)\s+(\S+)\s*$/.exec(value);
      if (scheme?.[2]) {
        out.push(scheme[2]);
        if (scheme[1]!.toLowerCase() === "basic") {
          const decoded = Buffer.from(scheme[2], "base64").toString("utf8");
          const colon = decoded.indexOf(":");
          if (colon >= 0) out.push(decoded, decoded.slice(colon + 1));
        }
      }
    }
  }
  if (url) {
    if (url.username) out.push(safeDecode(url.username));
    if (url.password) out.push(safeDecode(url.password));
    for (const [, value] of url.searchParams) out.push(value);
  }
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Environment variable names whose values are credentials (`GITHUB_TOKEN`, `DB_PASSWORD`, `OPENAI_API_KEY`). */
const CREDENTIAL_NAME = /TOKEN|SECRET|PASSW(?:OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|COOKIE/i;

/**
 * What a process environment contributes to a redactor. A stdio server inherits the whole
 * environment, so a value it could echo is worth hiding, in two tiers:
 * - `secrets`: values of 8 characters or more under a credential-looking name; redacted
 *   everywhere, results included, like configured secrets.
 * - `ambient`: any other value of 8 characters or more with both letters and digits (keys under
 *   innocent names, hosts, versions); scrubbed from messages only, since results legitimately
 *   mention paths such as `$HOME` and settings such as `$LANG`.
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): {
  secrets: string[];
  ambient: string[];
} {
  const secrets: string[] = [];
  const ambient: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || value.length < MIN_OUTPUT_SECRET_CHARS) continue;
    if (CREDENTIAL_NAME.test(name)) secrets.push(value);
    else if (/[A-Za-z]/.test(value) && /\d/.test(value)) ambient.push(value);
  }
  return { secrets, ambient };
}
