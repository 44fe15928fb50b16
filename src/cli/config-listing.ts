/**
 * `tether servers`: the definitions as written, with every secret redacted. References such as
 * `${env:TOKEN}` are shown unexpanded (they reveal nothing and say where a value comes from);
 * literal secrets (env and header values, URL userinfo, query values, auth-scheme credentials)
 * become `[redacted]`. The user's own words, paths and URLs stay readable.
 */
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { ConfigProblem, ListedServer, ServerListing } from "./config.ts";
import { PLAIN, type Style, table } from "./render.ts";

const REDACTED = "[redacted]";
/** Secrets shorter than this are not searched for in other values: they would match ordinary words. */
const MIN_SECRET_CHARS = 4;
/** A value that is nothing but references (after an optional auth scheme) reveals nothing. */
const ONLY_REFERENCES = /^\s*(?:(?:Bearer|Basic|Token)\s+)?(?:\$\{[^}]*\})+\s*$/i;
const URL_IN_TEXT = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'<>]*/g;
const AUTH_SCHEME = /\b(Bearer|Basic|Token)\s+(?!\$\{)[^\s"']+/gi;
const URL_PARTS = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s;

/** A secret-bearing value: shown when it is only references, else redacted. */
function shownSecret(value: string): string {
  return value === "" || ONLY_REFERENCES.test(value) ? value : REDACTED;
}

/** A URL as written, its userinfo, query values and fragment redacted unless they are references. */
export function shownUrl(raw: string): string {
  const m = URL_PARTS.exec(raw);
  if (!m) return ONLY_REFERENCES.test(raw) ? raw : REDACTED;
  const [, scheme = "", authority = "", path = "", query, fragment] = m;
  const at = authority.lastIndexOf("@");
  const host =
    at === -1
      ? authority
      : `${authority
          .slice(0, at)
          .split(":")
          .map((part) => shownSecret(part))
          .join(":")}@${authority.slice(at + 1)}`;
  const shownQuery =
    query === undefined
      ? ""
      : `?${query
          .slice(1)
          .split("&")
          .map((pair) => {
            const eq = pair.indexOf("=");
            return eq === -1 ? pair : `${pair.slice(0, eq + 1)}${shownSecret(pair.slice(eq + 1))}`;
          })
          .join("&")}`;
  const shownFragment = fragment === undefined ? "" : `#${shownSecret(fragment.slice(1))}`;
  return `${scheme}${host}${path}${shownQuery}${shownFragment}`;
}

/** A command or argument: literal secrets of the entry, URL credentials and auth-scheme tokens redacted. */
function shownWord(word: string, secrets: string[]): string {
  let out = word;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out.replace(URL_IN_TEXT, (url) => shownUrl(url)).replace(AUTH_SCHEME, `$1 ${REDACTED}`);
}

function shownMap(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map === undefined
    ? undefined
    : Object.fromEntries(Object.entries(map).map(([k, v]) => [k, shownSecret(v)]));
}

/** One row of the listing, as `--json` shows it. */
function row(s: ListedServer) {
  const secrets = s.literalSecrets
    .filter((v) => v.length >= MIN_SECRET_CHARS && !ONLY_REFERENCES.test(v))
    .sort((a, b) => b.length - a.length);
  const { shape } = s;
  const target =
    shape.transport === "stdio"
      ? [shape.command ?? "", ...(shape.args ?? [])].map((w) => shownWord(w, secrets)).join(" ")
      : shownWord(shownUrl(shape.url ?? ""), secrets);
  return {
    name: s.name,
    transport: shape.transport,
    target,
    source: s.source,
    scope: s.scope,
    ambiguous: s.ambiguous,
    ...(shape.env ? { env: shownMap(shape.env) } : {}),
    ...(shape.headers ? { headers: shownMap(shape.headers) } : {}),
    ...(shape.cwd !== undefined ? { cwd: shownWord(shape.cwd, secrets) } : {}),
  };
}

function problemRecord(p: ConfigProblem) {
  return { file: p.file, ...(p.keyPath ? { keyPath: p.keyPath } : {}), reason: p.reason, message: p.message };
}

/**
 * The listing: with `json`, `{"servers":[...],"errors":[...]}`; else a table, then one warning
 * line per broken file or malformed entry.
 */
export function renderServers(listing: ServerListing, json: boolean, style: Style = PLAIN): string {
  const rows = listing.servers.map(row);
  if (json) return `${terminalJson({ servers: rows, errors: listing.problems.map(problemRecord) })}\n`;
  const body =
    rows.length === 0
      ? "(no servers configured)\n"
      : table(
          ["NAME", "TRANSPORT", "SOURCE", "NOTE", "TARGET"],
          rows.map((r) => [r.name, r.transport, r.source, r.ambiguous ? "ambiguous" : "", r.target]),
          style,
        );
  return body + listing.problems.map((p) => `warning: ${terminalLine(p.message)}\n`).join("");
}
