/**
 * MCP Apps (SEP-1865), the server's half: which `ui://` resource a tool names, that resource read
 * under a byte bound and redacted with the connection's redactor (S4), and the
 * Content-Security-Policy its `_meta.ui.csp` declares. Every declared source is checked before it
 * reaches the policy: a source that is not a plain origin (a `;`, a keyword, a bare `*`, a path)
 * is refused and reported, never passed on, so no declaration can widen the policy beyond the
 * origins it names.
 */

import type { Client } from "../../client/api.ts";
import type { ResourceContents, Tool } from "../../client/results.ts";
import { limitError, protocolError, type Where } from "../../errors/failures.ts";
import type { TetherError } from "../../errors/tether-error.ts";
import { UI_EXTENSION, UI_MIME_TYPE } from "../../protocol/extensions.ts";

/**
 * What the explorer's client declares so that servers offer their apps (SEP-2133): the UI
 * extension, with the one content type it renders. Passed as `ConnectOptions.extensions`.
 */
export const APPS_EXTENSIONS: Readonly<Record<string, { mimeTypes: string[] }>> = Object.freeze({
  [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] },
});

/** The largest app document served, in bytes of HTML (a single-file app bundles its scripts). */
export const MAX_APP_HTML_BYTES = 8 * 1024 * 1024;
/** The reply that carries it: JSON escaping or base64 make it larger than the HTML. */
const MAX_APP_RESPONSE_BYTES = 2 * MAX_APP_HTML_BYTES;
/** Sources one directive may name, and the length of one. */
const MAX_SOURCES = 32;
const MAX_SOURCE_CHARS = 255;

/** Where an app's problems are met: reading its resource, which happened (the server answered). */
const READ: Where = { stage: "call", phase: "call", effect: "done" };

/** A resource that cannot be an app: `protocol` / `not_an_app`, in a sentence. */
export function notAnApp(message: string): TetherError {
  return protocolError(READ, "not_an_app", message);
}

/** The `ui://` resource a tool names (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`). */
export function appResourceUri(tool: Pick<Tool, "_meta">): string | undefined {
  const meta = tool._meta;
  if (!meta) return undefined;
  const ui = meta.ui;
  const nested = ui && typeof ui === "object" && !Array.isArray(ui) ? ui.resourceUri : undefined;
  const uri = typeof nested === "string" ? nested : meta["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : undefined;
}

/** The origins an app declared, each list checked. */
export interface AppCsp {
  connectDomains: string[];
  resourceDomains: string[];
  frameDomains: string[];
  baseUriDomains: string[];
}

/** What a declaration yields: the sources kept, and those refused (as declared, cut to 80 chars). */
export interface DeclaredCsp {
  csp: AppCsp;
  refused: string[];
}

const CSP_KEYS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const;

/**
 * A plain origin: http(s) or ws(s), a host name (a leading `*.` allowed) or an IPv4 address, an
 * optional port. Nothing else can appear in a directive, so nothing else is accepted.
 */
const SOURCE =
  /^(?:https?|wss?):\/\/(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*(?::\d{1,5})?$/;

/** `_meta.ui.csp` read and checked; anything that is not a list of plain origins is refused. */
export function declaredCsp(ui: unknown): DeclaredCsp {
  const csp: AppCsp = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };
  const refused: string[] = [];
  const declared = objectField(ui, "csp");
  if (declared === undefined) return { csp, refused };
  for (const key of CSP_KEYS) {
    const list = declared[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      refused.push(`${key}: not a list`);
      continue;
    }
    for (const source of list) {
      const ok =
        typeof source === "string" &&
        source.length <= MAX_SOURCE_CHARS &&
        SOURCE.test(source) &&
        csp[key].length < MAX_SOURCES;
      if (ok) {
        if (!csp[key].includes(source)) csp[key].push(source);
      } else
        refused.push(
          `${key}: ${String(typeof source === "string" ? source : JSON.stringify(source)).slice(0, 80)}`,
        );
    }
  }
  return { csp, refused };
}

/**
 * The frame document's Content-Security-Policy: the spec's restrictive default, opened only by
 * the declared origins. Stricter than the spec's example in three ways: no `'self'` (the
 * listener that serves the document serves nothing an app could load), no form submission, and
 * the `sandbox` directive, so the document is sandboxed even if opened outside its frame.
 * `frameAncestor` is the one origin that may frame it (the explorer's).
 */
export function frameCsp(csp: AppCsp, frameAncestor: string): string {
  const list = (sources: string[], fallback: string): string =>
    sources.length > 0 ? sources.join(" ") : fallback;
  const resources = csp.resourceDomains.length > 0 ? ` ${csp.resourceDomains.join(" ")}` : "";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline'${resources}`,
    `style-src 'unsafe-inline'${resources}`,
    `img-src data:${resources}`,
    `font-src data:${resources}`,
    `media-src data:${resources}`,
    `connect-src ${list(csp.connectDomains, "'none'")}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
    "object-src 'none'",
    `base-uri ${list(csp.baseUriDomains, "'none'")}`,
    "form-action 'none'",
    `frame-ancestors ${frameAncestor}`,
    "sandbox allow-scripts allow-forms",
  ].join("; ");
}

/** An app's resource, read: its HTML (redacted) and what its `_meta.ui` asks for. */
export interface AppResource {
  uri: string;
  html: string;
  csp: AppCsp;
  /** Declared sources left out of the policy, each with the list it was in. */
  refused: string[];
  /** `_meta.ui.prefersBorder`, when declared. */
  prefersBorder?: boolean;
}

/**
 * Reads an app's `ui://` resource through the connection (`resources/read`, bounded by
 * MAX_APP_HTML_BYTES), picks the content of the app's type, and redacts it. The connection's
 * errors (a timeout, a refused read) are thrown as they are; a resource that is not an app is an
 * `protocol` / `not_an_app` error (and one past the bound a `limit` / `app_too_large`). When the
 * content declares no CSP, the resource's entry in `resources/list` may (its `_meta.ui.csp`); a
 * listing that fails leaves the app with no sources.
 */
export async function readAppResource(
  client: Pick<Client, "readResource" | "redact"> & Partial<Pick<Client, "listResources">>,
  uri: string,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<AppResource> {
  if (!uri.startsWith("ui://")) throw notAnApp(`${uri} is not a ui:// resource`);
  const read = await client.readResource(uri, {
    ...options,
    maxResponseBytes: MAX_APP_RESPONSE_BYTES,
  });
  const ofType = read.contents.filter((c) => normalMime(c.mimeType) === UI_MIME_TYPE);
  const content = ofType.find((c) => c.uri === uri) ?? ofType[0];
  if (!content) {
    const types = read.contents.map((c) => c.mimeType ?? "no type").join(", ") || "no contents";
    throw notAnApp(`${uri} is not an MCP App: ${UI_MIME_TYPE} expected, the server sent ${types}`);
  }
  const html = htmlOf(content);
  const size = Buffer.byteLength(html);
  if (size > MAX_APP_HTML_BYTES)
    throw limitError(READ, "app_too_large", `${uri} is larger than ${MAX_APP_HTML_BYTES} bytes`, size, {
      maxAppHtmlBytes: MAX_APP_HTML_BYTES,
    });
  const ui = objectField(content._meta, "ui");
  const { csp, refused } = declaredCsp(
    objectField(ui, "csp") === undefined ? await listedUi(client, uri, options) : ui,
  );
  const prefersBorder = ui?.prefersBorder;
  return client.redact({
    uri,
    html,
    csp,
    refused,
    ...(typeof prefersBorder === "boolean" ? { prefersBorder } : {}),
  });
}

/** The `_meta.ui` of the resource's entry in `resources/list`, if it is listed. */
async function listedUi(
  client: Partial<Pick<Client, "listResources">>,
  uri: string,
  options: { signal?: AbortSignal; timeoutMs?: number },
): Promise<Record<string, unknown> | undefined> {
  if (!client.listResources) return undefined;
  try {
    const entry = (await client.listResources(options)).find((r) => r.uri === uri);
    return objectField(entry?._meta, "ui");
  } catch (error) {
    // Only the caller's own cancellation ends the read; any other failure leaves no sources.
    if (options.signal?.aborted) throw error;
    return undefined;
  }
}

function htmlOf(content: ResourceContents): string {
  if ("text" in content && typeof content.text === "string") return content.text;
  if ("blob" in content && typeof content.blob === "string")
    return Buffer.from(content.blob, "base64").toString("utf8");
  throw notAnApp(`${content.uri} has neither text nor blob`);
}

/** `text/html; profile=mcp-app` and `TEXT/HTML;profile=mcp-app` are the same type. */
function normalMime(mime: string | undefined): string {
  return (mime ?? "").toLowerCase().replace(/\s+/g, "");
}

function objectField(value: unknown, key: string): Record<string, unknown> | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return field && typeof field === "object" && !Array.isArray(field)
    ? (field as Record<string, unknown>)
    : undefined;
}
