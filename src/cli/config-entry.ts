/**
 * One server entry of a config file: its shape checked, and (only for the server being used) its
 * `${env:VAR}` / `${VAR}` references expanded. Messages name the file and the key path, never a value.
 */
import { configError } from "../errors/failures.ts";
import { secretsOf } from "../errors/redact.ts";

/** An entry's checked shape, as written: references not yet expanded. */
export interface EntryShape {
  transport: "stdio" | "http" | "sse";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

/** A server entry ready to become connect options: references expanded. */
export interface ServerEntry extends EntryShape {
  name: string;
  /** The file it came from. */
  source: string;
  /** What the redactor must know: expanded values, env and header values, URL userinfo and query. */
  secrets: string[];
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Key path segments longer than this are cut in messages (server names come from any file). */
const MAX_KEY_CHARS = 64;

/** `mcpServers.github.args[2]`, with names that are not identifiers quoted. */
export function keyPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  const cut = key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key;
  return IDENTIFIER.test(cut) ? `${base}.${cut}` : `${base}[${JSON.stringify(cut)}]`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function stringMap(value: unknown, file: string, path: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw configError("invalid_config", `${file}: ${path} must be an object of strings`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string")
      throw configError("invalid_config", `${file}: ${keyPath(path, k)} must be a string`);
  }
  // fromEntries defines own properties, so a key named __proto__ stays an ordinary key.
  return Object.fromEntries(Object.entries(value)) as Record<string, string>;
}

function optionalString(value: unknown, file: string, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw configError("invalid_config", `${file}: ${path} must be a string`);
  return value;
}

/**
 * Checks an entry's shape: `url` (and `headers`, `type`) for HTTP, else `command` (and `args`,
 * `env`, `cwd`) for stdio. Keys other tools add (`disabled`, `autoApprove`, ...) are ignored.
 */
export function entryShape(raw: unknown, file: string, path: string): EntryShape {
  if (!isObject(raw)) throw configError("invalid_config", `${file}: ${path} must be an object`);
  const type = optionalString(raw.type, file, keyPath(path, "type"));
  if (raw.url !== undefined) {
    return {
      transport: type === "sse" ? "sse" : "http",
      url: optionalString(raw.url, file, keyPath(path, "url")),
      headers: stringMap(raw.headers, file, keyPath(path, "headers")),
    };
  }
  if (raw.command !== undefined) {
    const args = raw.args;
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== "string")))
      throw configError("invalid_config", `${file}: ${keyPath(path, "args")} must be an array of strings`);
    return {
      transport: "stdio",
      command: optionalString(raw.command, file, keyPath(path, "command")),
      args: [...((args as string[] | undefined) ?? [])],
      env: stringMap(raw.env, file, keyPath(path, "env")),
      cwd: optionalString(raw.cwd, file, keyPath(path, "cwd")),
    };
  }
  throw configError("invalid_config", `${file}: ${path} needs a command (stdio) or a url (HTTP)`);
}

const REFERENCE = /\$\{(?:(env:)?([A-Za-z_][A-Za-z0-9_]*)|input:([A-Za-z0-9_.-]+))\}/g;

/** What references other than the environment's mean for this entry. */
export interface ExpandContext {
  /** VS Code's `${workspaceFolder}`: the folder holding `.vscode/` (only for a file in one). */
  workspaceFolder?: string;
  /** Asks the person at the terminal for `${input:ID}`; absent off a terminal. */
  input?: (id: string, where: string) => string;
}

/**
 * `${env:VAR}` and `${VAR}` from `env`, `${workspaceFolder}`, and `${input:ID}` asked for; each
 * value used is added to `used`. An unset variable is named, never guessed.
 */
export function expand(
  value: string,
  where: string,
  env: NodeJS.ProcessEnv,
  used: string[] = [],
  context: ExpandContext = {},
): string {
  return value.replace(
    REFERENCE,
    (_, prefix: string | undefined, name: string | undefined, input: string | undefined) => {
      if (input !== undefined) {
        if (!context.input)
          throw configError(
            "input_required",
            `${where} uses \${input:${input}}, which is asked for only on a terminal; set the value in the file or use \${env:VAR}`,
          );
        const answer = context.input(input, where);
        used.push(answer);
        return answer;
      }
      if (name === "workspaceFolder" && prefix === undefined) {
        if (context.workspaceFolder === undefined)
          throw configError(
            "unset_variable",
            `${where} uses \${workspaceFolder}, which only a file in a .vscode folder has`,
          );
        return context.workspaceFolder;
      }
      name = name!;
      const v = env[name];
      if (v === undefined) throw configError("unset_variable", `${where} uses \${${name}}, which is not set`);
      used.push(v);
      return v;
    },
  );
}

function expandMap(
  map: Record<string, string> | undefined,
  file: string,
  path: string,
  env: NodeJS.ProcessEnv,
  used: string[],
  context: ExpandContext,
): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(map).map(([k, v]) => [k, expand(v, `${file}: ${keyPath(path, k)}`, env, used, context)]),
  );
}

/** The entry of the server being used, its references expanded from `env`. */
export function expandEntry(
  name: string,
  shape: EntryShape,
  file: string,
  path: string,
  env: NodeJS.ProcessEnv,
  context: ExpandContext = {},
): ServerEntry {
  const used: string[] = [];
  const at = (key: string) => `${file}: ${keyPath(path, key)}`;
  const one = (v: string | undefined, where: string) =>
    v === undefined ? undefined : expand(v, where, env, used, context);
  const headers = expandMap(shape.headers, file, keyPath(path, "headers"), env, used, context);
  const envValues = expandMap(shape.env, file, keyPath(path, "env"), env, used, context);
  const entry: ServerEntry = {
    name,
    source: file,
    transport: shape.transport,
    command: one(shape.command, at("command")),
    args: shape.args?.map((a, i) => one(a, `${file}: ${keyPath(keyPath(path, "args"), i)}`)!),
    env: envValues,
    cwd: one(shape.cwd, at("cwd")),
    url: one(shape.url, at("url")),
    headers,
    secrets: [],
  };
  let url: URL | undefined;
  try {
    url = entry.url === undefined ? undefined : new URL(entry.url);
  } catch {
    url = undefined;
  }
  entry.secrets = [...used, ...Object.values(envValues ?? {}), ...secretsOf(url, headers)];
  return entry;
}

/** Deeper than this, two entries count as different: a hostile file cannot exhaust the stack. */
const MAX_COMPARE_DEPTH = 32;

/** Whether two raw entries are the same definition: equal JSON, object key order aside. */
export function sameDefinition(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth >= MAX_COMPARE_DEPTH) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((v, i) => sameDefinition(v, b[i], depth + 1))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => Object.hasOwn(b, k) && sameDefinition(a[k], b[k], depth + 1))
  );
}

/**
 * Whether two entries, each in its own file's format, start the same server: their shapes after
 * each format is read (`{"command": …}` and `{"type": "stdio", "command": …}` alike; no `args`
 * and `[]` alike; keys a tool adds for itself, such as `disabled`, aside) are the same definition.
 * An entry whose shape cannot be read is compared as written.
 */
export function sameServer(
  a: { raw: unknown; file: string; keyPath: string },
  b: { raw: unknown; file: string; keyPath: string },
): boolean {
  if (sameDefinition(a.raw, b.raw)) return true;
  let x: EntryShape;
  let y: EntryShape;
  try {
    x = entryShape(a.raw, a.file, a.keyPath);
    y = entryShape(b.raw, b.file, b.keyPath);
  } catch {
    return false;
  }
  const normal = (e: EntryShape) =>
    e.transport === "stdio"
      ? {
          transport: e.transport,
          command: e.command,
          args: e.args ?? [],
          env: e.env ?? {},
          cwd: e.cwd ?? null,
        }
      : { transport: e.transport, url: e.url, headers: e.headers ?? {} };
  return sameDefinition(normal(x), normal(y));
}
