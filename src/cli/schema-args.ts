import type { Prompt, Tool } from "../client/results.ts";
import { configError } from "../errors/failures.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { GivenArgs } from "./args.ts";
import { didYouMean } from "./suggest.ts";

type Schema = {
  type?: unknown;
  enum?: unknown;
  const?: unknown;
  anyOf?: unknown;
  oneOf?: unknown;
  properties?: unknown;
  items?: unknown;
  required?: unknown;
  additionalProperties?: unknown;
};

const asSchema = (v: unknown): Schema =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Schema) : {};

/** The JSON types a property schema admits (its own `type`, and those of anyOf/oneOf members). */
export function typesOf(schema: Schema): Set<string> {
  const out = new Set<string>();
  if (typeof schema.type === "string") out.add(schema.type);
  if (Array.isArray(schema.type)) for (const t of schema.type) if (typeof t === "string") out.add(t);
  for (const list of [schema.anyOf, schema.oneOf])
    if (Array.isArray(list)) for (const member of list) for (const t of typesOf(asSchema(member))) out.add(t);
  return out;
}

/** The members of a property's `enum` (or its anyOf/oneOf `const`s), when it lists them. */
export function enumOf(schema: Schema): JsonValue[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as JsonValue[];
  const members: JsonValue[] = [];
  for (const list of [schema.anyOf, schema.oneOf]) {
    if (!Array.isArray(list)) continue;
    for (const m of list) {
      const s = asSchema(m);
      if (s.const !== undefined) members.push(s.const as JsonValue);
      else if (Array.isArray(s.enum)) members.push(...(s.enum as JsonValue[]));
      else return undefined;
    }
  }
  return members.length > 0 ? members : undefined;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `key=value` text as the declared type wants it, or undefined when it fits none. */
export function convert(text: string, schema: Schema): JsonValue | undefined {
  const members = enumOf(schema);
  if (members) return members.find((m) => (typeof m === "string" ? m : JSON.stringify(m)) === text);
  const types = typesOf(schema);
  if (types.size === 0 || types.has("string")) return text;
  if (types.has("integer") && /^[+-]?\d+$/.test(text) && Number.isSafeInteger(Number(text)))
    return Number(text);
  if (types.has("number") && NUMBER.test(text.trim())) return Number(text);
  if (types.has("boolean") && (text === "true" || text === "false")) return text === "true";
  if (types.has("null") && text === "null") return null;
  if (types.has("array") || types.has("object")) {
    try {
      const value = JSON.parse(text) as JsonValue;
      const kind = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
      if (types.has(kind)) return value;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** How deep item types are spelled out: `string[][]` still reads, deeper nesting is `array`. */
const LABEL_DEPTH = 3;

/**
 * How a property's type reads in a message and in a signature: `number`, `"a"|"b"`, an array
 * with its item type (`string[]`, `{name, …}[]`), an object with its first property names.
 */
export function typeLabel(schema: Schema, depth = 0): string {
  const members = enumOf(schema);
  if (members) return members.map((m) => JSON.stringify(m)).join("|");
  const labels = new Set<string>();
  const own = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : [];
  for (const t of own) {
    if (typeof t !== "string") continue;
    labels.add(t === "array" ? arrayLabel(schema, depth) : t === "object" ? objectLabel(schema) : t);
  }
  for (const list of [schema.anyOf, schema.oneOf])
    if (Array.isArray(list))
      for (const member of list) {
        const label = typeLabel(asSchema(member), depth);
        if (label !== "any") labels.add(label);
      }
  return labels.size ? [...labels].join("|") : "any";
}

/** `string[]`, `("a"|"b")[]`, `{name, …}[]`; `array` when the items are not described. */
function arrayLabel(schema: Schema, depth: number): string {
  const items = asSchema(schema.items);
  if (depth >= LABEL_DEPTH || Object.keys(items).length === 0) return "array";
  const inner = typeLabel(items, depth + 1);
  if (inner === "any") return "array";
  return inner.includes("|") ? `(${inner})[]` : `${inner}[]`;
}

/** `{name}`, `{name, …}` (its first property, and a mark when there are more); `object` without any. */
function objectLabel(schema: Schema): string {
  const props = asSchema(schema.properties);
  const names = Object.keys(props);
  if (names.length === 0) return "object";
  return names.length === 1 ? `{${names[0]}}` : `{${names[0]}, …}`;
}

/** The tool the user named, or a `config` error suggesting the closest names (never another tool). */
export function findTool(name: string, tools: readonly Tool[]): Tool {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  throw configError(
    "unknown_tool",
    `the server has no tool named ${JSON.stringify(name)}${
      didYouMean(
        name,
        tools.map((t) => t.name),
      ) || " (see tether tools)"
    }`,
  );
}

/**
 * Fits the arguments to the tool's input schema before anything is sent: `key=value` text
 * converted to the declared type, unknown names and missing required arguments refused with a
 * `config` error. `key:=json` and whole JSON objects are sent as written (only their names are
 * checked). Values never appear in a message: they may be secrets.
 */
export function fitArguments(tool: Tool, given: GivenArgs): JsonObject {
  const schema = asSchema(tool.inputSchema);
  const props = asSchema(schema).properties;
  const properties: Record<string, unknown> =
    typeof props === "object" && props !== null && !Array.isArray(props)
      ? (props as Record<string, unknown>)
      : {};
  const names = Object.keys(properties);
  const open =
    schema.additionalProperties === true ||
    (typeof schema.additionalProperties === "object" && schema.additionalProperties !== null) ||
    (names.length === 0 && schema.additionalProperties === undefined);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(given.args)) {
    if (!(key in properties)) {
      if (open) {
        out[key] = value;
        continue;
      }
      throw configError(
        "unknown_argument",
        `${tool.name} has no argument ${JSON.stringify(key)}${didYouMean(key, names)}; its arguments: ${names.join(", ") || "none"}`,
      );
    }
    if (!given.plain.has(key) || typeof value !== "string") {
      out[key] = value;
      continue;
    }
    const property = asSchema(properties[key]);
    const fitted = convert(value, property);
    if (fitted === undefined) {
      // A misspelled enum member gets the closest members (the value itself is never repeated).
      const members = enumOf(property);
      const near = members
        ? didYouMean(
            value,
            members.map((m) => (typeof m === "string" ? m : JSON.stringify(m))),
          )
        : "";
      throw configError(
        "invalid_argument",
        `${tool.name}: ${key} takes ${typeLabel(property)}, and the value given does not fit${near} (${key}:=JSON sends a value as written)`,
      );
    }
    out[key] = fitted;
  }
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]).map(String) : [];
  const missing = required.filter((r) => !(r in out));
  if (missing.length > 0)
    throw configError(
      "missing_argument",
      `${tool.name} needs ${missing.join(", ")} (required: ${required.join(", ")})`,
    );
  return out;
}

/**
 * Checks a prompt's arguments against the ones it declares before anything is sent: an unknown
 * name (with the closest declared ones) or a missing required argument is a `config` error.
 * Values never appear in a message.
 */
export function checkPromptArguments(prompt: Prompt, args: Readonly<Record<string, string>>): void {
  const declared = (Array.isArray(prompt.arguments) ? prompt.arguments : []).filter(
    (a) => typeof a === "object" && a !== null && typeof a.name === "string",
  );
  const names = declared.map((a) => a.name);
  for (const key of Object.keys(args))
    if (!names.includes(key))
      throw configError(
        "unknown_argument",
        `${prompt.name} has no argument ${JSON.stringify(key)}${didYouMean(key, names)}; its arguments: ${names.join(", ") || "none"}`,
      );
  const required = declared.filter((a) => a.required === true).map((a) => a.name);
  const missing = required.filter((r) => !(r in args));
  if (missing.length > 0)
    throw configError(
      "missing_argument",
      `${prompt.name} needs ${missing.join(", ")} (required: ${required.join(", ")})`,
    );
}

/**
 * A call's arguments fitted to its tool's schema (the `config` error when they do not fit); with
 * no listing (the server could not list its tools) they go as written. One rule for `call`
 * one-shot and for the session process, which checks a call on `@NAME` itself.
 */
export function fitCall(tool: string, listed: readonly Tool[] | undefined, given: GivenArgs): JsonObject {
  return listed ? fitArguments(findTool(tool, listed), given) : given.args;
}
