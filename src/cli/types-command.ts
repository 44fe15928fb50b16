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
import { terminalLine } from "../errors/terminal-text.ts";
import {
  commentText,
  identifierOf,
  JSON_DECLARATION,
  JSON_TYPE,
  jsonLeaf,
  Names,
  PropertyKeys,
  pointerOf,
  type Schema,
  SchemaRebuild,
  setOwn,
  TOOLS_MAP,
  targetOf,
} from "./schema-rebuild.ts";

export { identifierOf };

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
  additionalProperties: false,
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
    const rebuild = (schema: unknown, name: string, text: string, args = false) => {
      const r = new SchemaRebuild(name, names, definitions, nodes, keys);
      r.run(opaque.has(i) ? {} : schema, commentText(text), args);
      refs.push(...r.refs);
    };
    rebuild(
      tool.inputSchema,
      `${stem}Input`,
      `Arguments of the tool "${label}".${unusable}${about ? `\n\n${about}` : ""}`,
      true,
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
        output: output ? { $ref: pointerOf(["definitions", output]) } : jsonLeaf(),
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
 * that comes back to itself without reaching a schema: each becomes any JSON value, which the
 * generator always takes.
 */
function settleRefs(document: Schema, refs: readonly Schema[], nodes: WeakSet<Schema>): void {
  for (const node of refs) {
    const chain = new Set<Schema>([node]);
    let at: Schema = node;
    while (typeof at.$ref === "string") {
      const target = targetOf(document, at.$ref, nodes);
      if (!target || chain.has(target)) {
        delete node.$ref;
        node.tsType = JSON_TYPE;
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

/**
 * The generator's interfaces, but the Tools map, as type aliases of the same object types: an
 * interface is never assignable to an index signature (a `JsonObject`, a tool's arguments), an
 * object type is when its members are. The generator writes each declaration from the start of a
 * line and ends it with a `}` alone on one; comments and string literals never begin a line so.
 */
function aliases(generated: string): string {
  let open = false;
  return generated
    .split("\n")
    .map((line) => {
      const declared = /^export interface ([A-Za-z0-9_$]+) \{(\})?$/.exec(line);
      if (declared && declared[1] !== TOOLS_MAP) {
        open = declared[2] === undefined;
        return `export type ${declared[1]} = {${open ? "" : "};"}`;
      }
      if (open && line === "}") {
        open = false;
        return "};";
      }
      return line;
    })
    .join("\n");
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
    .restore(`${JSON_DECLARATION}${aliases(generated)}`)
    // The generator notes which definition each type came from; here every one is ours, so the
    // note only repeats the type's name.
    .replace(REFERENCE_NOTE_ALONE, "")
    .replace(REFERENCE_NOTE, "")
    .replace(LITERAL_UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return { declarations, tools: built.listed };
}
