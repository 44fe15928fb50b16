/**
 * URL-required errors (SEP-1036): a server may answer a request with JSON-RPC error -32042
 * (URLElicitationRequiredError) whose `data.elicitations` lists URL-mode elicitations the user
 * must complete before the request can succeed. They are read here into a bounded, sanitized
 * list the caller can act on (show each URL, open it with consent, wait for
 * `notifications/elicitation/complete`, then send the request again itself). In process only:
 * the URLs never reach an error's message or record.
 */
import type { Redactor } from "./redact.ts";

/** The JSON-RPC error code of URLElicitationRequiredError. */
export const URL_ELICITATION_REQUIRED = -32042;

/** At most this many elicitations are kept from one error; the rest are dropped. */
export const MAX_URL_ELICITATIONS = 8;
/** A longer URL is dropped (never cut: a cut URL would open another page). */
export const MAX_ELICITATION_URL_CHARS = 2048;
/** A longer elicitation id is dropped: it could not be matched to a completion anyway. */
export const MAX_ELICITATION_ID_CHARS = 256;

/** One URL-mode elicitation a server requires before it can answer. */
export interface UrlElicitationRequired {
  /** The server's id; its `notifications/elicitation/complete` names it. */
  readonly elicitationId: string;
  /** An http(s) URL without userinfo, configured secrets redacted; shown whole before it is opened. */
  readonly url: string;
  /** The server's words for why (redacted, one line, truncated; URLs in it replaced by `[url]`). */
  readonly message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An http(s) URL as it may be shown and opened, or undefined. */
function safeUrl(raw: unknown, redactor: Redactor): string | undefined {
  if (typeof raw !== "string" || raw.length > MAX_ELICITATION_URL_CHARS) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  // Credentials in a URL a person is asked to open are never passed on.
  url.username = "";
  url.password = "";
  // The href is percent-encoded: no control or space survives in it.
  const href = redactor.redactSecrets(url.href);
  return href.length > MAX_ELICITATION_URL_CHARS ? undefined : href;
}

/**
 * The elicitations of a -32042 error's `data`, each checked: `mode: "url"`, a string id, an
 * http(s) URL. Entries that fail are dropped, as are repeated ids; at most
 * MAX_URL_ELICITATIONS are kept. Undefined for another code or when none is usable.
 */
export function requiredUrlElicitations(
  rpcCode: number,
  data: unknown,
  redactor: Redactor,
): readonly UrlElicitationRequired[] | undefined {
  if (rpcCode !== URL_ELICITATION_REQUIRED || !isObject(data) || !Array.isArray(data.elicitations))
    return undefined;
  const out: UrlElicitationRequired[] = [];
  const seen = new Set<string>();
  for (const e of data.elicitations.slice(0, MAX_URL_ELICITATIONS * 4)) {
    if (out.length >= MAX_URL_ELICITATIONS) break;
    if (!isObject(e) || e.mode !== "url") continue;
    const id = e.elicitationId;
    if (typeof id !== "string" || id === "" || id.length > MAX_ELICITATION_ID_CHARS || seen.has(id)) continue;
    const url = safeUrl(e.url, redactor);
    if (url === undefined) continue;
    seen.add(id);
    out.push(Object.freeze({ elicitationId: id, url, message: redactor.serverText(e.message) ?? "" }));
  }
  return out.length > 0 ? Object.freeze(out) : undefined;
}
