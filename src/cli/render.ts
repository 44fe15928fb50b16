import type { CallToolResult, Tool } from "../client/results.ts";
import { terminalBlock, terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import { cutToWidth, displayWidth, padToWidth } from "./display-width.ts";
import { enumOf, typeLabel, typesOf } from "./schema-args.ts";

function oneLine(text: unknown): string {
  return typeof text === "string" ? text.replace(/\s+/g, " ").trim() : "";
}

/** How human output looks: colour only on a terminal (and never with NO_COLOR), cut to its width. */
export interface Style {
  color: boolean;
  /** The terminal's width; off a terminal nothing is cut. */
  columns: number;
}

export const PLAIN: Style = { color: false, columns: Number.MAX_SAFE_INTEGER };

/** The style for this process's stdout. */
export function styleFor(isTty: boolean, columns: number | undefined, env: NodeJS.ProcessEnv): Style {
  return {
    color: isTty && !env.NO_COLOR && env.TERM !== "dumb",
    columns: isTty ? Math.max(40, columns || 100) : Number.MAX_SAFE_INTEGER,
  };
}

const bold = (style: Style, text: string) => (style.color ? `\x1b[1m${text}\x1b[22m` : text);
const dim = (style: Style, text: string) => (style.color ? `\x1b[2m${text}\x1b[22m` : text);

/**
 * Column widths for a terminal `columns` wide: columns that fit their fair share keep their whole
 * width, and what is left is shared out among the wider ones. Nothing shrinks when all fits.
 */
export function shareWidths(natural: readonly number[], columns: number, gap = 2): number[] {
  const available = columns - gap * (natural.length - 1);
  if (natural.reduce((a, b) => a + b, 0) <= available) return [...natural];
  const widths = natural.map(() => 0);
  let open = natural.map((_, i) => i);
  let budget = available;
  for (;;) {
    const share = Math.floor(budget / Math.max(1, open.length));
    const fits = open.filter((i) => natural[i]! <= share);
    if (fits.length === 0) {
      let extra = budget - share * open.length;
      for (const i of open) {
        widths[i] = Math.max(4, share + (extra-- > 0 ? 1 : 0));
      }
      return widths;
    }
    for (const i of fits) {
      widths[i] = natural[i]!;
      budget -= natural[i]!;
    }
    open = open.filter((i) => !fits.includes(i));
    if (open.length === 0) return widths;
  }
}

/**
 * Rows as aligned columns. Every cell passes the terminal sanitizer first and widths are display
 * widths of what is shown (wide characters take two columns); colour comes after. Off a terminal
 * nothing is cut; on one, the width is shared out by content and long cells end in `…`.
 */
export function table(header: string[], rawRows: string[][], style: Style = PLAIN): string {
  const rows = rawRows.map((r) => r.map((c) => oneLine(terminalLine(c))));
  const natural = header.map((h, i) =>
    Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ""))),
  );
  const widths = shareWidths(natural, style.columns);
  const cells = (row: string[]) =>
    row.map((c, i) => {
      const cut = cutToWidth(c, widths[i]!);
      return i === row.length - 1 ? cut : padToWidth(cut, widths[i]!);
    });
  const head = bold(style, cells(header).join("  ").trimEnd());
  const body = rows.map((r) => {
    const c = cells(r);
    const last = c.pop() ?? "";
    return `${c.join("  ")}${c.length ? "  " : ""}${dim(style, last)}`.trimEnd();
  });
  return `${[head, ...body].join("\n")}\n`;
}

/** A tool's input schema as a compact signature: `name(a: string, b?: number)`; raw server text, for `table`. */
export function signature(tool: Tool): string {
  const schema = tool.inputSchema as { properties?: Record<string, object>; required?: unknown };
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const params = Object.entries(schema.properties ?? {}).map(
    ([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${typeLabel(v ?? {})}`,
  );
  return `${tool.name}(${params.join(", ")})`;
}

/**
 * The hints a tool's annotations declare, as words: `read-only`, `destructive`, `idempotent`,
 * `open-world`. Only what the server said: a hint left out is not assumed from the spec's defaults
 * (`destructive` is not shown for a read-only tool, where the spec says it means nothing).
 */
export function toolHints(tool: Tool): string[] {
  const a = tool.annotations;
  if (typeof a !== "object" || a === null) return [];
  const hints: string[] = [];
  if (a.readOnlyHint === true) hints.push("read-only");
  if (a.destructiveHint === true && a.readOnlyHint !== true) hints.push("destructive");
  if (a.idempotentHint === true) hints.push("idempotent");
  if (a.openWorldHint === true) hints.push("open-world");
  return hints;
}

export function renderTools(tools: Tool[], style: Style = PLAIN): string {
  if (tools.length === 0) return "(no tools)\n";
  const description = (t: Tool) => (typeof t.description === "string" ? t.description : "");
  // The annotations column appears when a tool declares any of them.
  const hints = tools.map((t) => toolHints(t).join(", "));
  if (hints.every((h) => h === ""))
    return table(
      ["TOOL", "DESCRIPTION"],
      tools.map((t) => [signature(t), description(t)]),
      style,
    );
  return table(
    ["TOOL", "ANNOTATIONS", "DESCRIPTION"],
    tools.map((t, i) => [signature(t), hints[i]!, description(t)]),
    style,
  );
}

/** An example value of a schema: its default, its first enum member, or a value of its type (items filled in). */
function exampleValue(schema: JsonObject, depth = 0): JsonValue {
  if (schema.default !== undefined) return schema.default as JsonValue;
  const members = enumOf(schema);
  if (members) return members[0]!;
  const types = typesOf(schema);
  const object = (v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
  if (types.has("string") || types.size === 0) return "text";
  if (types.has("integer") || types.has("number")) return 1;
  if (types.has("boolean")) return true;
  if (types.has("array")) {
    const items = object(schema.items);
    return items && depth < 3 && Object.keys(items).length > 0 ? [exampleValue(items, depth + 1)] : [];
  }
  if (types.has("object")) {
    const props = object(schema.properties) ?? {};
    const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
    const out: JsonObject = {};
    if (depth < 3) for (const k of required) out[k] = exampleValue(object(props[k]) ?? {}, depth + 1);
    return out;
  }
  return null;
}

/** One `key=value` word of an example call; arrays, objects and null as `key:=json`. */
function exampleWord(name: string, schema: JsonObject): string {
  const value = exampleValue(schema);
  // key=value is converted to the declared type; only arrays, objects and null need key:=json.
  return typeof value === "object" ? `${name}:=${JSON.stringify(value)}` : `${name}=${String(value)}`;
}

/** The `key=value` words of an example call: every required argument, with an example value. */
export function exampleArgs(tool: Tool): string[] {
  const schema = tool.inputSchema as { properties?: Record<string, unknown>; required?: unknown };
  const props = typeof schema.properties === "object" && schema.properties !== null ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  return required.flatMap((k) => {
    const p = props[k];
    return [
      exampleWord(k, typeof p === "object" && p !== null && !Array.isArray(p) ? (p as JsonObject) : {}),
    ];
  });
}

/**
 * One tool in full for `tether tool`: its signature and title, description, annotations, input
 * and output schemas (terminal-safe JSON) and an example call line. Server text is sanitized.
 */
export function renderTool(tool: Tool, example: string, style: Style = PLAIN): string {
  const lines = [bold(style, terminalLine(signature(tool)))];
  const title = tool.title ?? tool.annotations?.title;
  if (typeof title === "string" && title !== "") lines.push(`title: ${terminalLine(title)}`);
  if (typeof tool.description === "string" && tool.description.trim() !== "")
    lines.push("", terminalBlock(tool.description.trim()));
  const hints = toolHints(tool);
  lines.push("", `annotations: ${hints.length ? hints.join(", ") : "(none declared)"}`);
  lines.push("", "input schema:", indent(terminalJson(tool.inputSchema ?? {}, 2)));
  lines.push(
    "",
    tool.outputSchema === undefined
      ? "output schema: (none declared)"
      : `output schema:\n${indent(terminalJson(tool.outputSchema, 2))}`,
  );
  lines.push("", "example:", `  ${terminalLine(example)}`);
  return `${lines.join("\n")}\n`;
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");

/** A value shown inside one of our `[...]` labels: one line, sanitized. */
function label(value: unknown): string {
  return terminalLine(String(value ?? ""));
}

/** One content block as sanitized text: a text block keeps its lines, anything else is a one-line label. */
function contentText(block: JsonValue): string {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return "";
  const b = block as JsonObject;
  if (b.type === "text" && typeof b.text === "string") return terminalBlock(b.text);
  if (
    b.type === "resource" &&
    typeof b.resource === "object" &&
    b.resource !== null &&
    !Array.isArray(b.resource)
  ) {
    const r = b.resource as JsonObject;
    return typeof r.text === "string" ? terminalBlock(r.text) : `[resource ${label(r.uri)}]`;
  }
  if (b.type === "resource_link") return `[resource link ${label(b.uri)}]`;
  // The decoded size: base64 padding and any whitespace are not content.
  const size = typeof b.data === "string" ? ` ${Buffer.byteLength(b.data, "base64")} bytes` : "";
  return `[${label(b.type ?? "content")}${typeof b.mimeType === "string" ? ` ${label(b.mimeType)}` : ""}${size}]`;
}

/** A call's text content (sanitized); structured content alone is shown as terminal-safe JSON. */
export function renderCall(result: CallToolResult): string {
  const text = result.content.map(contentText).join("\n");
  if (text === "" && result.structuredContent) return `${terminalJson(result.structuredContent, 2)}\n`;
  return text.endsWith("\n") ? text : `${text}\n`;
}

export function renderList(items: JsonObject[], key: "uri" | "name", style: Style = PLAIN): string {
  if (items.length === 0) return "(none)\n";
  return table(
    key === "uri" ? ["URI", "NAME", "DESCRIPTION"] : ["NAME", "ARGUMENTS", "DESCRIPTION"],
    items.map((i) =>
      key === "uri"
        ? [String(i.uri ?? ""), String(i.name ?? ""), String(i.description ?? "")]
        : [String(i.name ?? ""), promptArguments(i), String(i.description ?? "")],
    ),
    style,
  );
}

/** A prompt's arguments as `name, other?` (a `?` marks the optional ones). */
function promptArguments(prompt: JsonObject): string {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  return args
    .flatMap((a) =>
      typeof a === "object" && a !== null && !Array.isArray(a) && typeof a.name === "string"
        ? [`${a.name}${a.required === true ? "" : "?"}`]
        : [],
    )
    .join(", ");
}

/**
 * A resource read or a prompt: its text parts, one after another, sanitized. A blob is named, never
 * printed: `[binary image/png demo://logo]`, and on a terminal (`terminal`) with its decoded size,
 * `[binary image/png 1234 bytes demo://logo]`.
 */
export function renderText(result: JsonObject, terminal = false): string {
  const parts: string[] = [];
  for (const c of Array.isArray(result.contents) ? result.contents : []) {
    if (typeof c === "object" && c !== null && !Array.isArray(c)) {
      if (typeof c.text === "string") parts.push(terminalBlock(c.text));
      else if (!terminal) parts.push(`[binary ${label(c.mimeType)} ${label(c.uri)}]`);
      else {
        const mime = typeof c.mimeType === "string" ? `${label(c.mimeType)} ` : "";
        // The decoded size: base64 padding and any whitespace are not content.
        const size = typeof c.blob === "string" ? `${Buffer.byteLength(c.blob, "base64")} bytes ` : "";
        parts.push(`[binary ${mime}${size}${label(c.uri)}]`);
      }
    }
  }
  for (const m of Array.isArray(result.messages) ? result.messages : []) {
    if (typeof m === "object" && m !== null && !Array.isArray(m))
      parts.push(`${label(m.role)}: ${contentText(m.content ?? null)}`);
  }
  const text = parts.join("\n");
  return text.endsWith("\n") ? text : `${text}\n`;
}

/** Resource templates: the URI template (whole off a terminal, to paste), name and description. */
export function renderTemplates(items: JsonObject[], style: Style = PLAIN): string {
  if (items.length === 0) return "(none)\n";
  return table(
    ["URI TEMPLATE", "NAME", "DESCRIPTION"],
    items.map((i) => [String(i.uriTemplate ?? ""), String(i.name ?? ""), String(i.description ?? "")]),
    style,
  );
}

/** Completion values, one a line (sanitized); `--json` tells whether the server has more. */
export function renderCompletion(completion: { values: string[] }): string {
  const lines = completion.values.map((v) => terminalLine(String(v)));
  return lines.length ? `${lines.join("\n")}\n` : "";
}
