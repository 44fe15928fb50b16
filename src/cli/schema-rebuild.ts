/**
 * A tool's JSON schema rebuilt for \`tether types\` (types-command.ts) from the keywords that
 * describe a shape, and nothing else; nested definitions moved to top-level names of their own,
 * each \`$ref\` rewritten to match. See types-command.ts for why every schema is rebuilt.
 */
import { terminalBlock } from "../errors/terminal-text.ts";

/** Deeper nesting than this is declared `unknown`: real schemas are shallow, hostile ones need not be. */
const MAX_DEPTH = 24;
/** A description longer than this is cut: a comment, not a document. */
const MAX_DESCRIPTION_CHARS = 2000;
/** The name of the map from tool names to their types; never a tool's own type name. */
export const TOOLS_MAP = "Tools";
/**
 * The type of a value a schema leaves open: any JSON value, never `unknown`, so that every type
 * made here is one the library sends and receives (a tool's arguments are JSON).
 */
export const JSON_TYPE = "Json";
/** Its declaration, written once at the head of the file. */
export const JSON_DECLARATION = `/**
 * Any JSON value: what a schema leaves open.
 */
export type ${JSON_TYPE} = null | boolean | number | string | ${JSON_TYPE}[] | { [key: string]: ${JSON_TYPE} };
`;

/** A schema for any JSON value (the generator writes its `tsType` as it is: ours, never the server's). */
export const jsonLeaf = (): Schema => ({ tsType: JSON_TYPE });

export type Schema = { [key: string]: unknown };

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** One step of a JSON pointer: an own property of an object, or an element of an array. */
function step(at: unknown, token: string): unknown {
  if (typeof at !== "object" || at === null || !Object.hasOwn(at, token)) return undefined;
  return (at as Record<string, unknown>)[token];
}

/** Sets a key as an own property, so a key such as `__proto__` is data, never a prototype. */
export function setOwn(target: Schema, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * A PascalCase identifier of ASCII letters and digits from any name (`get-sum` → `GetSum`), in
 * the form the generator keeps as it is (a letter after digits is upper case; no leading digit).
 */
export function identifierOf(name: string, fallback = "Tool"): string {
  const words = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const joined = words
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("")
    .replace(/(\d)([a-z])/g, (_, d: string, l: string) => d + l.toUpperCase())
    .replace(/^\d+/, "");
  return joined || fallback;
}

/** Type names in use, so that no two declarations share one. */
export class Names {
  readonly #used = new Set<string>([TOOLS_MAP, JSON_TYPE]);

  /** `base` followed by each suffix, with a number after `base` where any of them is taken. */
  take(base: string, suffixes: readonly string[]): string {
    for (let n = 1; ; n++) {
      const stem = n === 1 ? base : `${base}${n}`;
      if (suffixes.some((s) => this.#used.has(stem + s))) continue;
      for (const s of suffixes) this.#used.add(stem + s);
      return stem;
    }
  }
}

/** Comment text: sanitized for a terminal (the file is often printed), never closing its comment. */
export function commentText(text: string): string {
  const cut = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  return terminalBlock(cut).replace(/\*\//g, "*\\/").trim();
}

/** A JSON pointer's tokens (`#/a/b~1c` → ["a", "b/c"]); undefined when it is no pointer. */
function pointerTokens(ref: string): string[] | undefined {
  if (ref === "#" || ref === "") return [];
  if (!ref.startsWith("#/")) return undefined;
  return ref
    .slice(2)
    .split("/")
    .map((t) => {
      const unescaped = t.replace(/~1/g, "/").replace(/~0/g, "~");
      try {
        return decodeURIComponent(unescaped);
      } catch {
        return unescaped;
      }
    });
}

export const pointerOf = (tokens: readonly string[]) =>
  `#/${tokens.map((t) => encodeURIComponent(t.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/")}`;

const samePrefix = (prefix: readonly string[], tokens: readonly string[]) =>
  prefix.length <= tokens.length && prefix.every((t, i) => t === tokens[i]);

/** Keywords whose value is one schema, a list of schemas or a map of them. */
const ONE = ["additionalProperties", "additionalItems"] as const;
const LIST = ["allOf", "anyOf", "oneOf"] as const;
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
/** The keywords of a rebuilt schema that give it a shape; one with none of them is any JSON value. */
const SHAPE = ["type", "enum", "$ref", "properties", "items", ...ONE, ...LIST, "tsType"] as const;

const hasType = (schema: Schema, type: string) =>
  schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

/**
 * What a rebuilt schema leaves open, made JSON: a value of no shape is any JSON value; an object
 * that names no properties takes any JSON members, and one that names some takes only those
 * unless it says `additionalProperties` (an argument a tool does not declare is a compile error,
 * as the CLI refuses it); an array's items are JSON where it does not say what they are.
 */
export function closeOver(out: Schema): void {
  if (!SHAPE.some((k) => Object.hasOwn(out, k))) {
    out.tsType = JSON_TYPE;
    return;
  }
  const named = isSchema(out.properties) && Object.keys(out.properties).length > 0;
  if (
    out.additionalProperties === true ||
    (out.additionalProperties === undefined && hasType(out, "object") && !named)
  )
    out.additionalProperties = jsonLeaf();
  if (hasType(out, "array")) {
    if (out.items === undefined) out.items = jsonLeaf();
    else if (Array.isArray(out.items) && (out.additionalItems === undefined || out.additionalItems === true))
      out.additionalItems = jsonLeaf();
  }
}

/**
 * One tool's schema, rebuilt from shape keywords only (see the file's comment), its nested
 * definitions moved to top-level names of their own. `definitions` receives them, keyed by name.
 */
export class SchemaRebuild {
  /** Where each nested definition was (pointer tokens) and the name it now has. */
  readonly #moved: { at: string[]; name: string }[] = [];
  /** Every `$ref` written, to be checked once every definition is in place. */
  readonly refs: Schema[] = [];

  constructor(
    readonly root: string,
    readonly names: Names,
    readonly definitions: Map<string, Schema>,
    readonly nodes: WeakSet<Schema>,
    readonly keys: PropertyKeys,
  ) {}

  /**
   * The root schema under its name, and its definitions under theirs. An `arguments` root is an
   * object, as the spec says a tool's input schema is: one that says otherwise (or only refers
   * elsewhere) is taken as an object with any JSON members.
   */
  run(schema: unknown, description: string | undefined, arguments_ = false): void {
    this.#collect(schema, [], 0);
    let rebuilt = this.#node(schema, [], 0);
    if (arguments_) {
      const other =
        rebuilt.$ref !== undefined ||
        rebuilt.enum !== undefined ||
        (rebuilt.type !== undefined && !hasType(rebuilt, "object"));
      if (other) {
        const ref = this.refs.indexOf(rebuilt);
        if (ref >= 0) this.refs.splice(ref, 1);
        rebuilt = { additionalProperties: jsonLeaf() };
        this.nodes.add(rebuilt);
      }
      delete rebuilt.tsType;
      rebuilt.type = "object";
      closeOver(rebuilt);
    }
    if (description) rebuilt.description = description;
    this.definitions.set(this.root, rebuilt);
    for (const { at, name } of this.#moved) {
      let source: unknown = schema;
      for (const t of at) source = step(source, t);
      this.definitions.set(name, this.#node(source, at, at.length));
    }
  }

  /** Finds nested `definitions`/`$defs` entries and names them, before any `$ref` is rewritten. */
  #collect(schema: unknown, at: string[], depth: number): void {
    if (!isSchema(schema) || depth > MAX_DEPTH) return;
    for (const map of ["definitions", "$defs"]) {
      const defs = schema[map];
      if (!isSchema(defs)) continue;
      for (const [key, value] of Object.entries(defs)) {
        const place = [...at, map, key];
        const name = this.names.take(this.root + identifierOf(key, "Definition"), [""]);
        this.#moved.push({ at: place, name });
        this.#collect(value, place, depth + 1);
      }
    }
    this.#children(schema, at, (child, place) => this.#collect(child, place, depth + 1));
  }

  /** Calls `visit` for each schema directly inside `schema`, with where it is. */
  #children(schema: Schema, at: string[], visit: (child: unknown, at: string[]) => void): void {
    if (isSchema(schema.properties))
      for (const [k, v] of Object.entries(schema.properties)) visit(v, [...at, "properties", k]);
    for (const k of ONE) if (isSchema(schema[k])) visit(schema[k], [...at, k]);
    if (Array.isArray(schema.items))
      for (const [i, v] of schema.items.entries()) visit(v, [...at, "items", String(i)]);
    else if (isSchema(schema.items)) visit(schema.items, [...at, "items"]);
    for (const k of LIST) {
      const list = schema[k];
      if (Array.isArray(list)) for (const [i, v] of list.entries()) visit(v, [...at, k, String(i)]);
    }
  }

  /** The rebuilt schema for `schema` (found at `at` in the tool's schema). */
  #node(schema: unknown, at: string[], depth: number): Schema {
    const out: Schema = {};
    this.nodes.add(out);
    if (!isSchema(schema) || depth > MAX_DEPTH) {
      closeOver(out);
      return out;
    }
    if (typeof schema.description === "string" && schema.description.trim())
      out.description = commentText(schema.description);
    else if (typeof schema.title === "string" && schema.title.trim())
      // A title would name a type of its own: it is kept as the comment instead.
      out.description = commentText(schema.title);
    if (schema.deprecated === true) out.deprecated = true;
    if (typeof schema.$ref === "string") {
      const ref = this.#ref(schema.$ref);
      if (ref) {
        out.$ref = ref;
        this.refs.push(out);
      } else closeOver(out);
      return out;
    }
    const type = schema.type;
    if (typeof type === "string" && TYPES.has(type)) out.type = type;
    else if (Array.isArray(type)) {
      const types = type.filter((t): t is string => typeof t === "string" && TYPES.has(t));
      if (types.length) out.type = [...new Set(types)];
    }
    const primitive = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);
    if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(primitive))
      out.enum = schema.enum;
    else if ("const" in schema && primitive(schema.const)) out.enum = [schema.const];
    if (Array.isArray(schema.required))
      out.required = [
        ...new Set(schema.required.filter((r): r is string => typeof r === "string").map(this.keys.key)),
      ];
    if (isSchema(schema.properties)) {
      const properties: Schema = {};
      for (const [k, v] of Object.entries(schema.properties))
        setOwn(properties, this.keys.key(k), this.#node(v, [...at, "properties", k], depth + 1));
      out.properties = properties;
    }
    for (const k of ONE) {
      const v = schema[k];
      if (typeof v === "boolean") out[k] = v;
      else if (isSchema(v)) out[k] = this.#node(v, [...at, k], depth + 1);
    }
    if (Array.isArray(schema.items))
      out.items = schema.items.map((v, i) => this.#node(v, [...at, "items", String(i)], depth + 1));
    else if (isSchema(schema.items)) out.items = this.#node(schema.items, [...at, "items"], depth + 1);
    for (const k of LIST) {
      const list = schema[k];
      if (Array.isArray(list) && list.length > 0)
        out[k] = list.map((v, i) => this.#node(v, [...at, k, String(i)], depth + 1));
    }
    closeOver(out);
    return out;
  }

  /** A `$ref` pointing into this tool's schema, rewritten to where its target now is. */
  #ref(ref: string): string | undefined {
    const tokens = pointerTokens(ref);
    if (!tokens) return undefined;
    let best: { at: string[]; name: string } | undefined;
    for (const m of this.#moved)
      if (samePrefix(m.at, tokens) && (!best || m.at.length > best.at.length)) best = m;
    return best
      ? pointerOf(["definitions", best.name, ...tokens.slice(best.at.length)])
      : pointerOf(["definitions", this.root, ...tokens]);
  }
}

/** The rebuilt schema a rewritten `$ref` lands on, if it lands on one. */
export function targetOf(document: Schema, ref: string, nodes: WeakSet<Schema>): Schema | undefined {
  let at: unknown = document;
  for (const t of pointerTokens(ref) ?? []) at = step(at, t);
  return isSchema(at) && nodes.has(at) ? at : undefined;
}

/**
 * Property names the generator cannot hold as keys: those of Object.prototype. It calls
 * `hasOwnProperty` and the like on the maps it walks, so a property of that name would stand in
 * for the method. Each such name is given to it as a placeholder identifier, unique in the
 * document, and written back as a string literal afterwards.
 */
export class PropertyKeys {
  readonly #placeholders = new Map<string, string>();
  readonly #prefix: string;

  constructor(documentText: string) {
    let n = 0;
    while (documentText.includes(`tetherKey${n}x`)) n++;
    this.#prefix = `tetherKey${n}x`;
  }

  /** The key to give the generator for a property name. */
  key = (name: string): string => {
    if (!RESERVED_KEYS.has(name)) return name;
    let placeholder = this.#placeholders.get(name);
    if (!placeholder) {
      placeholder = `${this.#prefix}${this.#placeholders.size}`;
      this.#placeholders.set(name, placeholder);
    }
    return placeholder;
  };

  /** The generated text with each placeholder back as the name it stands for. */
  restore(text: string): string {
    let out = text;
    for (const [name, placeholder] of this.#placeholders)
      out = out.replace(new RegExp(`\\b${placeholder}\\b`, "g"), JSON.stringify(name));
    return out;
  }
}

const RESERVED_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));
