/**
 * `tether types`: TypeScript declarations for every tool, made by json-schema-to-typescript from
 * the schemas the server listed: `<Tool>Input` (its arguments), `<Tool>Output` (the
 * `structuredContent` of its result, where it declares an output schema) and one `Tools` map from
 * each tool's name to both.
 *
 * Every schema is the server's word, so none reaches the generator as sent. Each is rebuilt from
 * the keywords that describe a shape (type, properties, items, enum, the combinators), and from
 * nothing else: `tsType` and `tsEnumNames` (raw TypeScript the generator would paste in), `title`
 * and `$id` (which would name types), pattern keys (pasted into comments unescaped) and every
 * `$ref` that leaves the document (which would make the generator read files or fetch URLs) are
 * dropped. Descriptions pass the terminal sanitizer and cannot close their comment. Type names
 * are made here, from tool names, as unique ASCII identifiers; nested definitions are renamed the
 * same way and their references rewritten to match. What is left of the server's text sits in
 * string literals, where the characters an editor may act on (bidirectional controls and the like)
 * are written as escapes.
 */
import type { Tool } from "../client/results.ts";
import { terminalBlock, terminalLine } from "../errors/terminal-text.ts";

/** Deeper nesting than this is declared `unknown`: real schemas are shallow, hostile ones need not be. */
const MAX_DEPTH = 24;
/** A description longer than this is cut: a comment, not a document. */
const MAX_DESCRIPTION_CHARS = 2000;
/** The name of the map from tool names to their types; never a tool's own type name. */
const TOOLS_MAP = "Tools";

type Schema = { [key: string]: unknown };

/** Which types one tool got: `output` is null where the tool declares no output schema. */
export interface ToolTypeNames {
  name: string;
  input: string;
  output: string | null;
}

export interface ToolTypes {
  declarations: string;
  tools: ToolTypeNames[];
}

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** One step of a JSON pointer: an own property of an object, or an element of an array. */
function step(at: unknown, token: string): unknown {
  if (typeof at !== "object" || at === null || !Object.hasOwn(at, token)) return undefined;
  return (at as Record<string, unknown>)[token];
}

/** Sets a key as an own property, so a key such as `__proto__` is data, never a prototype. */
function setOwn(target: Schema, key: string, value: unknown): void {
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
class Names {
  readonly #used = new Set<string>([TOOLS_MAP]);

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
function commentText(text: string): string {
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

const pointerOf = (tokens: readonly string[]) =>
  `#/${tokens.map((t) => encodeURIComponent(t.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/")}`;

const samePrefix = (prefix: readonly string[], tokens: readonly string[]) =>
  prefix.length <= tokens.length && prefix.every((t, i) => t === tokens[i]);

/** Keywords whose value is one schema, a list of schemas or a map of them. */
const ONE = ["additionalProperties", "additionalItems"] as const;
const LIST = ["allOf", "anyOf", "oneOf"] as const;
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/**
 * One tool's schema, rebuilt from shape keywords only (see the file's comment), its nested
 * definitions moved to top-level names of their own. `definitions` receives them, keyed by name.
 */
class SchemaRebuild {
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

  /** The root schema under its name, and its definitions under theirs. */
  run(schema: unknown, description: string | undefined): void {
    this.#collect(schema, [], 0);
    const rebuilt = this.#node(schema, [], 0);
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
    if (!isSchema(schema) || depth > MAX_DEPTH) return out;
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
      }
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
function targetOf(document: Schema, ref: string, nodes: WeakSet<Schema>): Schema | undefined {
  let at: unknown = document;
  for (const t of pointerTokens(ref) ?? []) at = step(at, t);
  return isSchema(at) && nodes.has(at) ? at : undefined;
}

/**
 * Characters that are valid in a TypeScript string literal but that an editor or terminal may act
 * on: DEL, C1 controls, the line and paragraph separators, bidirectional controls and marks, the
 * byte-order mark. Names never hold them, so each one left is in a string literal (a property name
 * or an enum member), where its `\u` escape means the same, or in a comment (a mark the terminal
 * sanitizer lets through), where the escape is plain text.
 */
const LITERAL_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

const NOTE =
  ' \\* This interface was referenced by `[A-Za-z0-9]+`\'s JSON-Schema\\n \\* via the `definition` "[A-Za-z0-9]+"\\.\\n';
const REFERENCE_NOTE_ALONE = new RegExp(`^/\\*\\*\\n${NOTE} \\*/\\n`, "gm");
const REFERENCE_NOTE = new RegExp(` \\*\\n${NOTE}`, "g");

/** The generator's options: nothing read from disk or the network, nothing pasted unchecked. */
const GENERATOR_OPTIONS = {
  bannerComment: "",
  additionalProperties: true,
  declareExternallyReferenced: true,
  enableConstEnums: false,
  ignoreMinAndMaxItems: true,
  strictIndexSignatures: false,
  unknownAny: true,
  unreachableDefinitions: true,
  format: true,
  $refOptions: { resolve: { external: false } },
};

/** The one schema document the generator is given, and the type names each tool got. */
interface Built {
  document: Schema;
  listed: ToolTypeNames[];
  keys: PropertyKeys;
}

/**
 * Property names the generator cannot hold as keys: those of Object.prototype. It calls
 * `hasOwnProperty` and the like on the maps it walks, so a property of that name would stand in
 * for the method. Each such name is given to it as a placeholder identifier, unique in the
 * document, and written back as a string literal afterwards.
 */
class PropertyKeys {
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

/**
 * The document for `tools`: each tool's schemas rebuilt under its names, and a `Tools` map. The
 * tools at the indexes in `opaque` get `unknown` instead of their schemas (the generator could not
 * take them). The same tools always get the same names.
 */
function documentFor(tools: readonly Tool[], opaque: ReadonlySet<number>): Built {
  const keys = new PropertyKeys(JSON.stringify(tools));
  const names = new Names();
  const definitions = new Map<string, Schema>();
  const nodes = new WeakSet<Schema>();
  const refs: Schema[] = [];
  const properties: Schema = {};
  const listed: ToolTypeNames[] = [];
  const stems = tools.map((tool) => names.take(identifierOf(tool.name), ["Input", "Output"]));
  for (const [i, tool] of tools.entries()) {
    const stem = stems[i]!;
    const label = terminalLine(tool.name).replace(/\*\//g, "*\\/");
    const about = tool.description ?? tool.title;
    const unusable = opaque.has(i) ? " Its schema could not be converted." : "";
    const rebuild = (schema: unknown, name: string, text: string) => {
      const r = new SchemaRebuild(name, names, definitions, nodes, keys);
      r.run(opaque.has(i) ? {} : schema, commentText(text));
      refs.push(...r.refs);
    };
    rebuild(
      tool.inputSchema,
      `${stem}Input`,
      `Arguments of the tool "${label}".${unusable}${about ? `\n\n${about}` : ""}`,
    );
    const output = tool.outputSchema === undefined ? null : `${stem}Output`;
    if (output)
      rebuild(tool.outputSchema, output, `The structuredContent of a "${label}" result.${unusable}`);
    const entry: Schema = {
      type: "object",
      additionalProperties: false,
      required: ["input", "output"],
      properties: {
        input: { $ref: pointerOf(["definitions", `${stem}Input`]) },
        output: output ? { $ref: pointerOf(["definitions", output]) } : {},
      },
    };
    if (about) entry.description = commentText(about);
    setOwn(properties, keys.key(tool.name), entry);
    listed.push({ name: tool.name, input: `${stem}Input`, output });
  }
  const document: Schema = {
    title: TOOLS_MAP,
    description: "Each tool by name: the arguments it takes and the structuredContent it returns.",
    type: "object",
    additionalProperties: false,
    required: [...new Set(tools.map((t) => keys.key(t.name)))],
    properties,
    definitions: Object.fromEntries(definitions),
  };
  settleRefs(document, refs, nodes);
  return { document, listed, keys };
}

/**
 * Drops every `$ref` that lands nowhere (outside the rebuilt schemas) or on a chain of references
 * that comes back to itself without reaching a schema: each becomes `unknown`, which the generator
 * always takes.
 */
function settleRefs(document: Schema, refs: readonly Schema[], nodes: WeakSet<Schema>): void {
  for (const node of refs) {
    const chain = new Set<Schema>([node]);
    let at: Schema = node;
    while (typeof at.$ref === "string") {
      const target = targetOf(document, at.$ref, nodes);
      if (!target || chain.has(target)) {
        delete node.$ref;
        break;
      }
      chain.add(target);
      at = target;
    }
  }
}

/** Runs the generator with its diagnostics off: with VERBOSE set it prints its working to stdout. */
async function quietly<T>(run: () => Promise<T>): Promise<T> {
  const verbose = process.env.VERBOSE;
  delete process.env.VERBOSE;
  try {
    return await run();
  } finally {
    if (verbose !== undefined) process.env.VERBOSE = verbose;
  }
}

/** Generates TypeScript from one schema document. */
export type Generator = (document: object) => Promise<string>;

/** json-schema-to-typescript, loaded only here: the other commands never pay for it. */
export async function loadGenerator(): Promise<Generator> {
  const { compile } = await import("json-schema-to-typescript");
  return (document) => quietly(() => compile(document as never, TOOLS_MAP, GENERATOR_OPTIONS));
}

/** Declarations for `tools` (`generator`: json-schema-to-typescript unless a test gives another). */
export async function toolTypes(tools: readonly Tool[], generator?: Generator): Promise<ToolTypes> {
  const compile = generator ?? (await loadGenerator());
  const generate = (built: Built) => compile(built.document);
  let built = documentFor(tools, new Set());
  let generated: string;
  try {
    generated = await generate(built);
  } catch {
    // A schema the generator cannot take: each tool alone finds which, and those become unknown.
    const opaque = new Set<number>();
    for (const [i, tool] of tools.entries())
      await generate(documentFor([tool], new Set())).catch(() => opaque.add(i));
    built = documentFor(tools, opaque);
    generated = await generate(built);
  }
  const declarations = built.keys
    .restore(generated)
    // The generator notes which definition each type came from; here every one is ours, so the
    // note only repeats the type's name.
    .replace(REFERENCE_NOTE_ALONE, "")
    .replace(REFERENCE_NOTE, "")
    .replace(LITERAL_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return { declarations, tools: built.listed };
}
