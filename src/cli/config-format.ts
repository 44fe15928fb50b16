import { createRequire } from "node:module";

/**
 * Config file formats. A format is a parse over a file's bounded text that yields its server map
 * raw: each name with its entry exactly as written, before any validation or expansion. Problems
 * are reported by key path only; a format never quotes the text it was given.
 */

/** One file's servers, by name, as written. */
export interface RawServerMap {
  /** The key path of the map in the file (`mcpServers`, `servers`), for messages. */
  keyPath: string;
  /** Each entry, with the key path of its own map when that differs from `keyPath`. */
  entries: [name: string, raw: unknown, mapPath?: string][];
}

export type FormatResult =
  | { ok: true; map: RawServerMap | undefined }
  | {
      ok: false;
      problem: "invalid_json" | "invalid_toml" | "invalid_config";
      keyPath?: string;
      rule: string;
    };

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
  return serverMap(doc);
};

/**
 * The parsers load on first use, synchronously (the loader runs before any deadline exists and
 * must stay synchronous): a command that reads no JSONC or TOML file never pays for them.
 */
const load = createRequire(import.meta.url);
let jsoncParser: typeof import("jsonc-parser") | undefined;
let tomlParser: typeof import("smol-toml") | undefined;

/** The line (1-based) holding `offset`: where a syntax error is, without quoting anything. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** A map read from a parsed document: `mcpServers`, else VS Code's `servers`. */
function serverMap(doc: unknown): FormatResult {
  if (!isObject(doc)) return { ok: false, problem: "invalid_config", rule: "is not a JSON object" };
  const keyPath =
    doc.mcpServers !== undefined ? "mcpServers" : doc.servers !== undefined ? "servers" : undefined;
  if (keyPath === undefined) return { ok: true, map: undefined };
  const map = doc[keyPath];
  if (!isObject(map)) return { ok: false, problem: "invalid_config", keyPath, rule: "must be an object" };
  return { ok: true, map: { keyPath, entries: Object.entries(map) } };
}

/** JSONC, as VS Code writes its mcp.json: comments and trailing commas allowed. */
function parseJsonc(text: string): { ok: true; doc: unknown } | { ok: false; line: number } {
  jsoncParser ??= load("jsonc-parser") as typeof import("jsonc-parser");
  const errors: import("jsonc-parser").ParseError[] = [];
  const doc: unknown = jsoncParser.parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) return { ok: false, line: lineAt(text, errors[0]!.offset) };
  return { ok: true, doc };
}

/** The same maps as `mcpJson`, in JSONC (VS Code's files, and any file named with --config). */
export const mcpJsonc: ConfigFormat = (text) => {
  // Most files are plain JSON: the JSONC parser is loaded only for one that is not.
  try {
    return serverMap(JSON.parse(text));
  } catch {
    // Comments or trailing commas, or broken: the JSONC parser decides which.
  }
  const parsed = parseJsonc(text);
  if (!parsed.ok)
    return { ok: false, problem: "invalid_json", rule: `is not valid JSON or JSONC (line ${parsed.line})` };
  return serverMap(parsed.doc);
};

/**
 * Claude Code's state file: the user's servers (`mcpServers`) and each project's
 * (`projects[<folder>].mcpServers`); for the current folder, the project's entry of a name is the
 * one Claude Code uses, so it is the one read.
 */
export function claudeState(cwd: string): ConfigFormat {
  return (text) => {
    const top = mcpJson(text);
    if (!top.ok) return top;
    const doc = JSON.parse(text) as Record<string, unknown>;
    const projects = doc.projects;
    const project = isObject(projects) && Object.hasOwn(projects, cwd) ? projects[cwd] : undefined;
    const own = isObject(project) ? project.mcpServers : undefined;
    const mapPath = `projects[${JSON.stringify(cwd)}].mcpServers`;
    if (own !== undefined && !isObject(own))
      return { ok: false, problem: "invalid_config", keyPath: mapPath, rule: "must be an object" };
    const entries: [string, unknown, string?][] = isObject(own)
      ? Object.entries(own).map(([name, raw]) => [name, raw, mapPath])
      : [];
    const names = new Set(entries.map(([name]) => name));
    if (top.map?.keyPath === "mcpServers")
      for (const [name, raw] of top.map.entries) if (!names.has(name)) entries.push([name, raw]);
    if (entries.length === 0) return { ok: true, map: undefined };
    return { ok: true, map: { keyPath: "mcpServers", entries } };
  };
}

/**
 * Codex's `config.toml`: `[mcp_servers.NAME]` tables with `command`/`args`/`env`/`cwd`, or `url`
 * with `http_headers` and `bearer_token_env_var` (which becomes an `${env:VAR}` reference, so the
 * token is read only for the server being used). Other keys are ignored.
 */
export const codexToml: ConfigFormat = (text) => {
  tomlParser ??= load("smol-toml") as typeof import("smol-toml");
  let doc: unknown;
  try {
    doc = tomlParser.parse(text);
  } catch (error) {
    const line = (error as { line?: unknown }).line;
    // The parser's message quotes the text around the fault: only the line number is kept.
    return {
      ok: false,
      problem: "invalid_toml",
      rule: `is not valid TOML${typeof line === "number" ? ` (line ${line})` : ""}`,
    };
  }
  if (!isObject(doc)) return { ok: false, problem: "invalid_config", rule: "is not a TOML table" };
  const map = doc.mcp_servers;
  if (map === undefined) return { ok: true, map: undefined };
  if (!isObject(map))
    return { ok: false, problem: "invalid_config", keyPath: "mcp_servers", rule: "must be a table" };
  const entries: [string, unknown][] = Object.entries(map).map(([name, raw]) => {
    if (!isObject(raw)) return [name, raw];
    const { command, args, env, cwd, url, http_headers, bearer_token_env_var } = raw;
    if (url !== undefined) {
      const headers: Record<string, unknown> = isObject(http_headers) ? { ...http_headers } : {};
      if (typeof bearer_token_env_var === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(bearer_token_env_var))
        headers.Authorization = `Bearer \${env:${bearer_token_env_var}}`;
      return [name, { url, ...(Object.keys(headers).length ? { headers } : {}) }];
    }
    return [name, { command, args, env, cwd }];
  });
  return { ok: true, map: { keyPath: "mcp_servers", entries } };
};
