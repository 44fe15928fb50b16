/**
 * Scrubbing of text that may carry secrets. Every string that reaches a message, a public field,
 * an event or CLI output passes through a Redactor first; the one place that knows what a secret
 * looks like is here.
 */

const URL_PATTERN = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'<>)]*/g;
const AUTH_SCHEME_PATTERN = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]+/gi;
const REDACTED = "[redacted]";
/** Server text shown to users is cut to this many characters (after redaction). */
export const MAX_SERVER_TEXT_CHARS = 300;
/** Secrets shorter than this are not searched for: they would match ordinary words. */
const MIN_SECRET_CHARS = 4;

/** A secret and the forms servers echo it back in (URL-encoded, base64). */
function formsOf(secrets: Iterable<string>): Set<string> {
  const all = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== "string" || s.length < MIN_SECRET_CHARS) continue;
    all.add(s);
    all.add(encodeURIComponent(s));
    all.add(Buffer.from(s, "utf8").toString("base64").replace(/=+$/, ""));
  }
  return all;
}

/** Longest first, so that a secret containing another is removed whole. */
function longestFirst(all: Iterable<string>): string[] {
  return [...all].filter((s) => s.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
}

export class Redactor {
  #secrets: string[];

  constructor(secrets: Iterable<string> = []) {
    this.#secrets = longestFirst(formsOf(secrets));
  }

  /** A redactor that also knows these secrets. */
  with(secrets: Iterable<string>): Redactor {
    return new Redactor([...this.#secrets, ...secrets]);
  }

  /**
   * Teaches this redactor secrets obtained after it was made (OAuth tokens, codes, verifiers,
   * assertions), so that every holder of it scrubs them from then on. Learn before the secret
   * is sent or received, so no error made afterwards can carry it.
   */
  learn(secrets: Iterable<string>): void {
    const fresh = [...formsOf(secrets)].filter((s) => !this.#secrets.includes(s));
    if (fresh.length > 0) this.#secrets = longestFirst([...this.#secrets, ...fresh]);
  }

  /** Removes known secrets, URLs and credentials in auth-scheme form. */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.#secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out.replace(URL_PATTERN, "[url]").replace(AUTH_SCHEME_PATTERN, `$1 ${REDACTED}`);
  }

  /** Server-supplied text: control characters folded, scrubbed, then truncated. */
  serverText(text: unknown): string | undefined {
    if (typeof text !== "string") return undefined;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
    const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
    const scrubbed = this.scrub(flat);
    return scrubbed.length > MAX_SERVER_TEXT_CHARS
      ? `${scrubbed.slice(0, MAX_SERVER_TEXT_CHARS)}…`
      : scrubbed;
  }
}

/** Knows no configured secrets, but still strips URLs and auth-scheme credentials. */
export const baseRedactor = new Redactor();

/** The values in a header map and a URL that count as secrets (header values, userinfo, query values). */
export function secretsOf(url: URL | undefined, headers: Record<string, string> | undefined): string[] {
  const out: string[] = [];
  if (headers) {
    for (const value of Object.values(headers)) {
      out.push(value);
      const scheme = /^\s*\S+\s+(\S+)\s*$/.exec(value);
      if (scheme?.[1]) out.push(scheme[1]);
    }
  }
  if (url) {
    if (url.username) out.push(decodeURIComponent(url.username));
    if (url.password) out.push(decodeURIComponent(url.password));
    for (const [, value] of url.searchParams) out.push(value);
  }
  return out;
}
