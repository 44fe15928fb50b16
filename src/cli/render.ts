import type { CallToolResult, Tool } from "../client/client.ts";
import { terminalBlock, terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

function oneLine(text: unknown, max: number): string {
  const s = typeof text === "string" ? text.replace(/\s+/g, " ").trim() : "";
  return s.length > max ? `${s.slice(0, Math.max(0, max - 1))}…` : s;
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
 * Rows as aligned columns, the last column cut to the terminal's width. Every cell passes the
 * terminal sanitizer first (widths are measured on what is shown); colour comes after.
 */
export function table(header: string[], rawRows: string[][], style: Style = PLAIN): string {
  const rows = rawRows.map((r) => r.map((c) => terminalLine(c)));
  const widths = header.map((h, i) =>
    Math.min(40, Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))),
  );
  const used = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0);
  const lastWidth = Math.max(10, style.columns - used);
  const cells = (row: string[]) =>
    row.map((c, i) =>
      i === row.length - 1 ? oneLine(c, lastWidth) : oneLine(c, widths[i]!).padEnd(widths[i]!),
    );
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
  const schema = tool.inputSchema as { properties?: Record<string, { type?: unknown }>; required?: unknown };
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const params = Object.entries(schema.properties ?? {}).map(([k, v]) => {
    const type = Array.isArray(v?.type) ? v.type.join("|") : typeof v?.type === "string" ? v.type : "any";
    return `${k}${required.has(k) ? "" : "?"}: ${type}`;
  });
  return `${tool.name}(${params.join(", ")})`;
}

export function renderTools(tools: Tool[], style: Style = PLAIN): string {
  if (tools.length === 0) return "(no tools)\n";
  return table(
    ["TOOL", "DESCRIPTION"],
    tools.map((t) => [signature(t), typeof t.description === "string" ? t.description : ""]),
    style,
  );
}

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
  const size = typeof b.data === "string" ? ` ${Math.floor((b.data.length * 3) / 4)} bytes` : "";
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
    key === "uri" ? ["URI", "NAME", "DESCRIPTION"] : ["NAME", "DESCRIPTION"],
    items.map((i) =>
      key === "uri"
        ? [String(i.uri ?? ""), String(i.name ?? ""), String(i.description ?? "")]
        : [String(i.name ?? ""), String(i.description ?? "")],
    ),
    style,
  );
}

/** A resource read or a prompt: its text parts, one after another, sanitized. */
export function renderText(result: JsonObject): string {
  const parts: string[] = [];
  for (const c of Array.isArray(result.contents) ? result.contents : []) {
    if (typeof c === "object" && c !== null && !Array.isArray(c)) {
      parts.push(
        typeof c.text === "string" ? terminalBlock(c.text) : `[binary ${label(c.mimeType)} ${label(c.uri)}]`,
      );
    }
  }
  for (const m of Array.isArray(result.messages) ? result.messages : []) {
    if (typeof m === "object" && m !== null && !Array.isArray(m))
      parts.push(`${label(m.role)}: ${contentText(m.content ?? null)}`);
  }
  const text = parts.join("\n");
  return text.endsWith("\n") ? text : `${text}\n`;
}
