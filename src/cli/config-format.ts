/**
 * Config file formats. A format is a parse over a file's bounded text that yields its server map
 * raw: each name with its entry exactly as written, before any validation or expansion. Problems
 * are reported by key path only; a format never quotes the text it was given.
 */

/** One file's servers, by name, as written. */
export interface RawServerMap {
  /** The key path of the map in the file (`mcpServers`, `servers`), for messages. */
  keyPath: string;
  entries: [name: string, raw: unknown][];
}

export type FormatResult =
  | { ok: true; map: RawServerMap | undefined }
  | { ok: false; problem: "invalid_json" | "invalid_config"; keyPath?: string; rule: string };

/** Turns a config file's text into its server map; `map` is undefined when the file defines none. */
export type ConfigFormat = (text: string) => FormatResult;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * JSON with the common `mcpServers` map (Claude Desktop, Claude Code, Cursor, Windsurf, .mcp.json)
 * or VS Code's `servers` map; where a file has both, `mcpServers` is the one read.
 */
export const mcpJson: ConfigFormat = (text) => {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // The parser's message quotes the text around the fault, which may be a secret: not kept.
    return { ok: false, problem: "invalid_json", rule: "is not valid JSON" };
  }
  if (!isObject(doc)) return { ok: false, problem: "invalid_config", rule: "is not a JSON object" };
  const keyPath =
    doc.mcpServers !== undefined ? "mcpServers" : doc.servers !== undefined ? "servers" : undefined;
  if (keyPath === undefined) return { ok: true, map: undefined };
  const map = doc[keyPath];
  if (!isObject(map)) return { ok: false, problem: "invalid_config", keyPath, rule: "must be an object" };
  return { ok: true, map: { keyPath, entries: Object.entries(map) } };
};
