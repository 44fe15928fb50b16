import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { configError } from "../errors/failures.ts";

/** One server entry from a config file, before it becomes connect options. */
export interface ServerEntry {
  name: string;
  source: string;
  transport: "stdio" | "http" | "sse";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

/** The usual places, in the order they are searched: the project's first, then the user's. */
export function defaultConfigPaths(
  cwd = process.cwd(),
  home = homedir(),
  platform = process.platform,
): string[] {
  const appData = process.env.APPDATA ?? join(home, "AppData", "Roaming");
  const claude =
    platform === "darwin"
      ? join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
      : platform === "win32"
        ? join(appData, "Claude", "claude_desktop_config.json")
        : join(process.env.XDG_CONFIG_HOME ?? join(home, ".config"), "Claude", "claude_desktop_config.json");
  const vscodeUser =
    platform === "darwin"
      ? join(home, "Library", "Application Support", "Code", "User", "mcp.json")
      : platform === "win32"
        ? join(appData, "Code", "User", "mcp.json")
        : join(process.env.XDG_CONFIG_HOME ?? join(home, ".config"), "Code", "User", "mcp.json");
  return [
    join(cwd, ".mcp.json"),
    join(cwd, ".vscode", "mcp.json"),
    join(cwd, ".cursor", "mcp.json"),
    join(home, ".claude.json"),
    join(home, ".cursor", "mcp.json"),
    vscodeUser,
    join(home, ".codeium", "windsurf", "mcp_config.json"),
    claude,
  ];
}

/** `${env:VAR}` and `${VAR}` from the environment; an unset variable is a config error naming it. */
export function expand(value: string, where: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replace(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw configError("unset_variable", `${where} uses \${${name}}, which is not set`);
    return v;
  });
}

function strings(value: unknown, where: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw configError("invalid_config", `${where} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw configError("invalid_config", `${where}.${k} must be a string`);
    out[k] = expand(v, `${where}.${k}`);
  }
  return out;
}

/** Reads one config file's `mcpServers` (Claude Desktop, Cursor, .mcp.json) or `servers` (VS Code) map. */
export function readConfigFile(path: string, required: boolean): ServerEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    if (!required) return [];
    throw configError("config_unreadable", `the config file ${path} could not be read`, cause);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw configError("invalid_config", `the config file ${path} is not valid JSON`, cause);
  }
  if (typeof doc !== "object" || doc === null)
    throw configError("invalid_config", `the config file ${path} is not a JSON object`);
  const d = doc as Record<string, unknown>;
  const key = d.mcpServers !== undefined ? "mcpServers" : d.servers !== undefined ? "servers" : undefined;
  if (!key) return [];
  const map = d[key];
  if (typeof map !== "object" || map === null || Array.isArray(map))
    throw configError("invalid_config", `${path}: ${key} must be an object`);
  const out: ServerEntry[] = [];
  for (const [name, raw] of Object.entries(map)) {
    const where = `${path}: ${key}.${name}`;
    if (typeof raw !== "object" || raw === null)
      throw configError("invalid_config", `${where} must be an object`);
    const e = raw as Record<string, unknown>;
    const type = typeof e.type === "string" ? e.type : undefined;
    if (typeof e.url === "string") {
      out.push({
        name,
        source: path,
        transport: type === "sse" ? "sse" : "http",
        url: expand(e.url, `${where}.url`),
        headers: strings(e.headers, `${where}.headers`),
      });
    } else if (typeof e.command === "string") {
      if (e.args !== undefined && (!Array.isArray(e.args) || e.args.some((a) => typeof a !== "string"))) {
        throw configError("invalid_config", `${where}.args must be an array of strings`);
      }
      out.push({
        name,
        source: path,
        transport: "stdio",
        command: expand(e.command, `${where}.command`),
        args: ((e.args as string[] | undefined) ?? []).map((a, i) => expand(a, `${where}.args[${i}]`)),
        env: strings(e.env, `${where}.env`),
        cwd: typeof e.cwd === "string" ? expand(e.cwd, `${where}.cwd`) : undefined,
      });
    } else {
      throw configError("invalid_config", `${where} needs a command (stdio) or a url (HTTP)`);
    }
  }
  return out;
}

/** Every entry from `--config FILE`, or else from the usual places (first definition of a name wins). */
export function loadServers(configPath: string | undefined): ServerEntry[] {
  if (configPath !== undefined) return readConfigFile(configPath, true);
  const seen = new Set<string>();
  const out: ServerEntry[] = [];
  for (const path of defaultConfigPaths()) {
    for (const entry of readConfigFile(path, false)) {
      if (seen.has(entry.name)) continue;
      seen.add(entry.name);
      out.push(entry);
    }
  }
  return out;
}
