import type { JsonObject } from "../jsonrpc/messages.ts";

/**
 * Extensions (SEP-2133): optional additions to the protocol, each named `vendor-prefix/name` and
 * declared in the `extensions` map of the client's and the server's capabilities, with a settings
 * object per extension (`{}` when it has none). Both eras carry the map the same way: in
 * `initialize` (2024-11-05 to 2025-11-25) and in every request's client-capabilities `_meta`
 * (2026-07-28). Every extension tether itself speaks (tasks, skills, the UI of MCP Apps) is
 * declared through this one map, never as a special case.
 */

/** The 2026-07-28 tasks extension: declared on a request that accepts a task. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** Skills (SEP-2640): `skills/list`, `skills/get`, and skill files as resources. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
/** MCP Apps (SEP-1865): the client renders `ui://` resources of this MIME type. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
export const UI_MIME_TYPE = "text/html;profile=mcp-app";

/** Settings per extension id. */
export type Extensions = Readonly<Record<string, JsonObject>>;

/** Most extensions one client declares, and the most their settings may weigh serialised. */
export const MAX_EXTENSIONS = 64;
export const MAX_EXTENSION_SETTINGS_BYTES = 64 * 1024;

/**
 * An extension id: a mandatory vendor prefix of dot-separated labels (a reversed domain name),
 * a slash, and a name; the labels and the name follow the `_meta` key rules (letters and digits
 * at both ends, `-`, `_` and `.` inside).
 */
const LABEL = "[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
const NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
const EXTENSION_ID = new RegExp(`^${LABEL}(?:\\.${LABEL})*/${NAME}$`);

export function isExtensionId(id: string): boolean {
  return id.length <= 256 && EXTENSION_ID.test(id);
}

/**
 * Why a caller's extension map cannot be declared, or undefined when it can: each id well formed,
 * each settings value a plain JSON object, at most MAX_EXTENSIONS, settings within their bound.
 */
export function extensionsProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return "extensions must be an object mapping extension ids to settings objects";
  const ids = Object.keys(value);
  if (ids.length > MAX_EXTENSIONS) return `extensions may declare at most ${MAX_EXTENSIONS} extensions`;
  for (const id of ids) {
    if (!isExtensionId(id))
      return `extensions: "${id.slice(0, 80)}" is not an extension id (vendor-prefix/name, e.g. com.example/feature)`;
    if (!isPlainObject(value[id]))
      return `extensions: the settings of ${id} must be an object ({} when it has none)`;
  }
  let size: number;
  try {
    size = JSON.stringify(value).length;
  } catch {
    return "extensions: the settings must be plain JSON";
  }
  if (size > MAX_EXTENSION_SETTINGS_BYTES)
    return `extensions: the settings weigh more than ${MAX_EXTENSION_SETTINGS_BYTES} bytes`;
  return undefined;
}

/** The capabilities with these extensions added to (or replacing entries of) their `extensions` map. */
export function withExtensions(capabilities: JsonObject, extensions: Extensions | undefined): JsonObject {
  if (!extensions || Object.keys(extensions).length === 0) return capabilities;
  const own = isPlainObject(capabilities.extensions) ? capabilities.extensions : {};
  return { ...capabilities, extensions: { ...own, ...extensions } };
}

/**
 * What a peer's capabilities declare: each well-formed id with an object as its settings (a peer
 * that writes `true` or `null` for "no settings" gets `{}`); anything else in the map is ignored.
 */
export function declaredExtensions(capabilities: JsonObject | undefined): Extensions {
  const map = capabilities?.extensions;
  if (!isPlainObject(map)) return {};
  const out: Record<string, JsonObject> = {};
  let count = 0;
  for (const [id, settings] of Object.entries(map)) {
    if (count >= MAX_EXTENSIONS * 4) break;
    if (!isExtensionId(id)) continue;
    if (isPlainObject(settings)) out[id] = settings as JsonObject;
    else if (settings === true || settings === null) out[id] = {};
    else continue;
    count++;
  }
  return Object.freeze(out);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
