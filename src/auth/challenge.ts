/**
 * The `WWW-Authenticate` header of a 401 or 403: which challenges it carries and the Bearer one's
 * parameters (RFC 7235 §4.1, RFC 6750 §3, RFC 9728 §5.1). Pure; it never throws on bad input.
 */

/** What a Bearer challenge asks for. */
export interface BearerChallenge {
  /** `invalid_token`, `insufficient_scope`, ... when the server named one. */
  error: string | undefined;
  /** The scopes the server says this request needs, in order, without duplicates. */
  scopes: string[] | undefined;
  /** Where the server's protected-resource metadata is (RFC 9728). */
  resourceMetadata: string | undefined;
}

interface Challenge {
  scheme: string;
  params: Map<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Splits a header into challenges: a scheme, then `name=value` pairs (a token or a quoted
 * string). A token not followed by `=` starts a new challenge; anything unreadable up to the next
 * comma is skipped (a token68 credential among it).
 */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let rest = header;
  let current: Challenge | undefined;
  for (let guard = 0; guard < 512 && rest !== ""; guard++) {
    rest = rest.replace(/^[\s,]+/, "");
    const name = TOKEN.exec(rest)?.[0];
    if (!name) {
      rest = rest.replace(/^[^,]*/, "");
      continue;
    }
    const after = rest.slice(name.length);
    const equals = /^\s*=\s*/.exec(after);
    if (!equals || !current) {
      current = { scheme: name.toLowerCase(), params: new Map() };
      out.push(current);
      rest = equals ? after.replace(/^[^,]*/, "") : after;
      continue;
    }
    rest = after.slice(equals[0].length);
    let value = "";
    if (rest.startsWith('"')) {
      let i = 1;
      for (; i < rest.length && rest[i] !== '"'; i++) {
        if (rest[i] === "\\" && i + 1 < rest.length) i++;
        value += rest[i];
      }
      rest = rest.slice(i + 1);
    } else {
      value = TOKEN.exec(rest)?.[0] ?? "";
      rest = rest.slice(value.length).replace(/^[^,]*/, "");
    }
    const key = name.toLowerCase();
    if (!current.params.has(key)) current.params.set(key, value);
  }
  return out;
}

/**
 * The Bearer challenge of a `WWW-Authenticate` header, if there is one; else its DPoP challenge
 * (RFC 9449 §7.1), which a server that takes only DPoP-bound tokens sends, with the same
 * parameters.
 */
export function bearerChallenge(header: string | null | undefined): BearerChallenge | undefined {
  if (!header) return undefined;
  const all = parseChallenges(header);
  const bearer = all.find((c) => c.scheme === "bearer") ?? all.find((c) => c.scheme === "dpop");
  if (!bearer) return undefined;
  const scope = bearer.params.get("scope");
  return {
    error: bearer.params.get("error") || undefined,
    scopes: scope === undefined ? undefined : scopeList(scope),
    resourceMetadata: bearer.params.get("resource_metadata") || undefined,
  };
}

/** Whether a `WWW-Authenticate` header asks for a DPoP proof with a server nonce (RFC 9449 §9). */
export function dpopNonceChallenge(header: string | null | undefined): boolean {
  if (!header) return false;
  return parseChallenges(header).some(
    (c) => c.scheme === "dpop" && c.params.get("error") === "use_dpop_nonce",
  );
}

/** A space-separated scope string as a list, in order, without duplicates or empty entries. */
export function scopeList(scope: string | undefined): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(/\s+/).filter((s) => s !== ""))];
}

/** The union of scope lists, in first-seen order. */
export function unionScopes(...lists: (readonly string[] | undefined)[]): string[] {
  return [...new Set(lists.flatMap((l) => l ?? []))];
}
