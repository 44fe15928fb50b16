/**
 * Named servers from config files, and the rules that decide which definition a name means.
 *
 * Config files come from two kinds of places: the project's (`./.mcp.json` and friends, which a
 * cloned repository controls) and the user's own (home, app data). The rules:
 *
 * - Only `--config FILE` is read when it is given; otherwise the usual places are, every time a
 *   name is looked up or the servers are listed, and never for a URL or `--` target.
 * - A file that is absent defines nothing. A file that exists but cannot be used (unreadable, not
 *   a regular file, over the size bound, not UTF-8, not valid JSON, its map not an object) is
 *   broken: what it defines is unknown. An entry whose shape is wrong is malformed: it breaks its
 *   own name only.
 * - A name with two different definitions (what each would run, after its file's format is read)
 *   is ambiguous: refused.
 *   The same definition in two files is not.
 * - A name defined only in project files, while one of the user's own files is broken, is refused
 *   as ambiguous too: the user's file may define the name, and a repository must not be able to
 *   take over the user's server (and the user's `${env:...}` secrets) because the user's file
 *   could not be read. The opposite case is not refused: a broken project file cannot contest the
 *   user's definition, so a repository cannot disable the user's servers by shipping a broken file.
 * - A name found nowhere, while some file is broken, is unknown, and the error names the broken files.
 * - References are expanded only in the entry being used, so an unset variable elsewhere harms
 *   nothing; listing expands nothing.
 */
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { configError } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import {
  type EntryShape,
  entryShape,
  expandEntry,
  keyPath,
  type ServerEntry,
  sameServer,
} from "./config-entry.ts";
import { CONFIG_FILE_MAX_BYTES, type FileProblem, readConfigText } from "./config-file.ts";
import { type ConfigFormat, claudeState, codexToml, mcpJson, mcpJsonc } from "./config-format.ts";
import { didYouMean } from "./suggest.ts";

/** `project`: the current folder's files, which a cloned repository controls; `user`: the user's own. */
export type Scope = "project" | "user";

/** Where the usual places are, and the environment that references expand from. */
export interface ConfigEnvironment {
  cwd: string;
  home: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Asks the person at the terminal for `${input:ID}`; without it such a reference is a config error. */
  input?: (id: string, where: string) => string;
}

export function configEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): ConfigEnvironment {
  const home = (platform === "win32" ? env.USERPROFILE : env.HOME) || homedir();
  return { cwd: process.cwd(), home, env, platform };
}

interface ConfigSource {
  path: string;
  scope: Scope;
  format: ConfigFormat;
  /** This file's size bound (default `CONFIG_FILE_MAX_BYTES`). */
  maxBytes?: number;
}

/**
 * Claude Code keeps its whole state (history, per-project settings) in `~/.claude.json`, which
 * grows past a megabyte in ordinary use; it gets a larger bound of its own, still far below
 * anything that could hold the CLI up.
 */
export const CLAUDE_STATE_MAX_BYTES = 32 * 1024 * 1024;

function defaultSources(where: ConfigEnvironment): ConfigSource[] {
  const { cwd, home, env, platform } = where;
  const appData = env.APPDATA ?? join(home, "AppData", "Roaming");
  const xdg = env.XDG_CONFIG_HOME ?? join(home, ".config");
  const claude =
    platform === "darwin"
      ? join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
      : platform === "win32"
        ? join(appData, "Claude", "claude_desktop_config.json")
        : join(xdg, "Claude", "claude_desktop_config.json");
  const vscodeUser =
    platform === "darwin"
      ? join(home, "Library", "Application Support", "Code", "User", "mcp.json")
      : platform === "win32"
        ? join(appData, "Code", "User", "mcp.json")
        : join(xdg, "Code", "User", "mcp.json");
  const claudeStatePath = join(home, ".claude.json");
  const codex = join(env.CODEX_HOME || join(home, ".codex"), "config.toml");
  const places: [string, Scope, ConfigFormat][] = [
    [join(cwd, ".mcp.json"), "project", mcpJson],
    [join(cwd, ".vscode", "mcp.json"), "project", mcpJsonc],
    [join(cwd, ".cursor", "mcp.json"), "project", mcpJson],
    [claudeStatePath, "user", claudeState(cwd)],
    [join(home, ".cursor", "mcp.json"), "user", mcpJson],
    [vscodeUser, "user", mcpJsonc],
    [join(home, ".codeium", "windsurf", "mcp_config.json"), "user", mcpJson],
    [claude, "user", mcpJson],
    [codex, "user", codexToml],
  ];
  // Run from the home folder, a project path can be a user path too: read it once, as the user's.
  const byPath = new Map<string, ConfigSource>();
  for (const [path, scope, format] of places) {
    const key = resolve(path);
    const seen = byPath.get(key);
    if (seen) seen.scope = seen.scope === "user" || scope === "user" ? "user" : "project";
    else
      byPath.set(key, {
        path,
        scope,
        format,
        maxBytes: path === claudeStatePath ? CLAUDE_STATE_MAX_BYTES : CONFIG_FILE_MAX_BYTES,
      });
  }
  return [...byPath.values()];
}

/** The usual places, in the order they are searched: the project's first, then the user's. */
export function defaultConfigPaths(
  cwd = process.cwd(),
  home = homedir(),
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  return defaultSources({ cwd, home, env, platform }).map((s) => s.path);
}

/** A file or an entry that cannot be used, for listings: where it is and why, never what it holds. */
export interface ConfigProblem {
  file: string;
  /** The entry's key path, when one entry is malformed rather than the whole file broken. */
  keyPath?: string;
  reason: string;
  message: string;
}

/** One name's entry in one file, as written. */
interface Definition {
  name: string;
  file: string;
  scope: Scope;
  keyPath: string;
  raw: unknown;
}

type LoadedFile =
  | { source: ConfigSource; kind: "absent" }
  | { source: ConfigSource; kind: "broken"; error: TetherError }
  | { source: ConfigSource; kind: "ok"; definitions: Definition[] };

const FILE_PROBLEMS: Record<FileProblem, [reason: string, rule: string]> = {
  unreadable: ["config_unreadable", "could not be read"],
  not_regular_file: ["config_not_regular_file", "is not a regular file"],
  too_large: ["config_too_large", "is larger than its size bound"],
  invalid_encoding: ["invalid_config", "is not UTF-8 text"],
};

function load(source: ConfigSource): LoadedFile {
  const { path } = source;
  const reading = readConfigText(path, source.maxBytes);
  if (reading.kind === "absent") return { source, kind: "absent" };
  if (reading.kind === "broken") {
    const [reason, fixedRule] = FILE_PROBLEMS[reading.problem];
    const rule =
      reading.problem === "too_large"
        ? `is larger than ${source.maxBytes ?? CONFIG_FILE_MAX_BYTES} bytes`
        : fixedRule;
    return {
      source,
      kind: "broken",
      error: configError(reason, `the config file ${path} ${rule}`, reading.cause),
    };
  }
  const parsed = source.format(reading.text);
  if (!parsed.ok) {
    const message =
      parsed.keyPath === undefined
        ? `the config file ${path} ${parsed.rule}`
        : `${path}: ${parsed.keyPath} ${parsed.rule}`;
    return { source, kind: "broken", error: configError("invalid_config", message) };
  }
  const definitions = (parsed.map?.entries ?? []).map(([name, raw, mapPath]) => ({
    name,
    file: path,
    scope: source.scope,
    keyPath: keyPath(mapPath ?? parsed.map!.keyPath, name),
    raw,
  }));
  return { source, kind: "ok", definitions };
}

/** `--config FILE` alone, which must exist and be usable; else every usual place. */
function loadAll(configPath: string | undefined, where: ConfigEnvironment): LoadedFile[] {
  if (configPath === undefined) return defaultSources(where).map(load);
  // A named file is read as TOML (Codex) by its extension, else as JSONC (a superset of JSON).
  const format = /\.toml$/i.test(configPath) ? codexToml : mcpJsonc;
  const loaded = load({ path: configPath, scope: "user", format });
  if (loaded.kind === "absent")
    throw configError("config_unreadable", `the config file ${configPath} could not be read`);
  if (loaded.kind === "broken") throw loaded.error;
  return [loaded];
}

type Verdict =
  | { kind: "use"; definition: Definition }
  | { kind: "ambiguous"; message: string }
  | { kind: "unknown"; message: string };

function listed(files: string[]): string {
  return files.length <= 1 ? (files[0] ?? "") : `${files.slice(0, -1).join(", ")} and ${files.at(-1)}`;
}

/** The rules of this module's comment, for one name. */
function decide(name: string, files: LoadedFile[]): Verdict {
  const definitions = files.flatMap((f) =>
    f.kind === "ok" ? f.definitions.filter((d) => d.name === name) : [],
  );
  const broken = files.flatMap((f) => (f.kind === "broken" ? [f] : []));
  const first = definitions[0];
  if (!first) {
    const also = broken.length ? `; ${broken.map((b) => b.error.message).join("; ")}` : "";
    const known = files.flatMap((f) => (f.kind === "ok" ? f.definitions.map((d) => d.name) : []));
    return {
      kind: "unknown",
      message: `no configured server is named ${name}${didYouMean(name, known)}${also}`,
    };
  }
  if (definitions.some((d) => !sameServer(d, first))) {
    const differing = [...new Set(definitions.map((d) => d.file))];
    return {
      kind: "ambiguous",
      message: `the server ${name} is defined differently in ${listed(differing)}; pick one with --config FILE`,
    };
  }
  const brokenUserFiles = broken.filter((b) => b.source.scope === "user");
  if (definitions.every((d) => d.scope === "project") && brokenUserFiles.length > 0) {
    return {
      kind: "ambiguous",
      message:
        `the server ${name} is defined only in the project's ${listed([...new Set(definitions.map((d) => d.file))])}, ` +
        `and ${listed(brokenUserFiles.map((b) => b.source.path))}, which could not be used, may define it too; ` +
        "pick one with --config FILE",
    };
  }
  return { kind: "use", definition: first };
}

/**
 * The entry of the server named `name`, its references expanded: from `--config FILE` alone when
 * given, else from the usual places under this module's rules. Nothing is started here.
 */
export function findServer(
  name: string,
  configPath: string | undefined,
  where: ConfigEnvironment = configEnvironment(),
): ServerEntry {
  const verdict = decide(name, loadAll(configPath, where));
  if (verdict.kind === "unknown") throw configError("unknown_server", verdict.message);
  if (verdict.kind === "ambiguous") throw configError("ambiguous_server", verdict.message);
  const { file, keyPath: path, raw } = verdict.definition;
  return expandEntry(name, entryShape(raw, file, path), file, path, where.env, {
    workspaceFolder: workspaceFolderOf(file),
    input: where.input,
  });
}

/** VS Code's `${workspaceFolder}`: the folder holding `.vscode/`, for a file inside one. */
function workspaceFolderOf(file: string): string | undefined {
  const folder = dirname(resolve(file));
  return basename(folder) === ".vscode" ? dirname(folder) : undefined;
}

/** One definition for a listing: as written, references unexpanded. */
export interface ListedServer {
  name: string;
  source: string;
  scope: Scope;
  shape: EntryShape;
  /** Whether a lookup of this name is refused as ambiguous. */
  ambiguous: boolean;
  /** Literal (unexpanded) env and header values of this entry, for the display to redact. */
  literalSecrets: string[];
}

export interface ServerListing {
  servers: ListedServer[];
  problems: ConfigProblem[];
}

/**
 * Every definition in the files a lookup would read, each with its source, plus the broken files
 * and malformed entries. Only a broken `--config FILE` fails the listing as a whole.
 */
export function listServers(
  configPath: string | undefined,
  where: ConfigEnvironment = configEnvironment(),
): ServerListing {
  const files = loadAll(configPath, where);
  const servers: ListedServer[] = [];
  const problems: ConfigProblem[] = [];
  const verdicts = new Map<string, Verdict>();
  for (const f of files) {
    if (f.kind === "broken") {
      problems.push({ file: f.source.path, reason: f.error.reason, message: f.error.message });
      continue;
    }
    if (f.kind === "absent") continue;
    for (const d of f.definitions) {
      let shape: EntryShape;
      try {
        shape = entryShape(d.raw, d.file, d.keyPath);
      } catch (error) {
        if (!(error instanceof TetherError)) throw error;
        problems.push({ file: d.file, keyPath: d.keyPath, reason: error.reason, message: error.message });
        continue;
      }
      let verdict = verdicts.get(d.name);
      if (!verdict) {
        verdict = decide(d.name, files);
        verdicts.set(d.name, verdict);
      }
      servers.push({
        name: d.name,
        source: d.file,
        scope: d.scope,
        shape,
        ambiguous: verdict.kind === "ambiguous",
        literalSecrets: [...Object.values(shape.env ?? {}), ...Object.values(shape.headers ?? {})],
      });
    }
  }
  return { servers, problems };
}
