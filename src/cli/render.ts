import type { CallToolResult, Tool } from "../client/client.ts";
import { Redactor, secretsOf } from "../errors/redact.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { ServerEntry } from "./config.ts";

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

/** Rows as aligned columns, the last column cut to the terminal's width. */
export function table(header: string[], rows: string[][], style: Style = PLAIN): string {
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

/** A tool's input schema as a compact signature: `name(a: string, b?: number)`. */
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

function contentText(block: JsonValue): string {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return "";
  const b = block as JsonObject;
  if (b.type === "text" && typeof b.text === "string") return b.text;
  if (
    b.type === "resource" &&
    typeof b.resource === "object" &&
    b.resource !== null &&
    !Array.isArray(b.resource)
  ) {
    const r = b.resource as JsonObject;
    return typeof r.text === "string" ? r.text : `[resource ${String(r.uri ?? "")}]`;
  }
  if (b.type === "resource_link") return `[resource link ${String(b.uri ?? "")}]`;
  const size = typeof b.data === "string" ? ` ${Math.floor((b.data.length * 3) / 4)} bytes` : "";
  return `[${String(b.type ?? "content")}${typeof b.mimeType === "string" ? ` ${b.mimeType}` : ""}${size}]`;
}

export function renderCall(result: CallToolResult): string {
  const text = result.content.map(contentText).join("\n");
  if (text === "" && result.structuredContent)
    return `${JSON.stringify(result.structuredContent, null, 2)}\n`;
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

/** A resource read or a prompt: its text parts, one after another. */
export function renderText(result: JsonObject): string {
  const parts: string[] = [];
  for (const c of Array.isArray(result.contents) ? result.contents : []) {
    if (typeof c === "object" && c !== null && !Array.isArray(c)) {
      parts.push(
        typeof c.text === "string" ? c.text : `[binary ${String(c.mimeType ?? "")} ${String(c.uri ?? "")}]`,
      );
    }
  }
  for (const m of Array.isArray(result.messages) ? result.messages : []) {
    if (typeof m === "object" && m !== null && !Array.isArray(m))
      parts.push(`${String(m.role ?? "")}: ${contentText(m.content ?? null)}`);
  }
  const text = parts.join("\n");
  return text.endsWith("\n") ? text : `${text}\n`;
}

/** Config entries with every secret redacted: env and header values, URL userinfo and query. */
export function renderServers(servers: ServerEntry[], json: boolean, style: Style = PLAIN): string {
  const shown = servers.map((s) => {
    let target: string;
    if (s.url) {
      let url: URL | undefined;
      try {
        url = new URL(s.url);
      } catch {
        url = undefined;
      }
      if (url) {
        if (url.username) url.username = "redacted";
        if (url.password) url.password = "redacted";
        for (const k of [...url.searchParams.keys()]) url.searchParams.set(k, "redacted");
        target = url.toString();
      } else target = "(invalid url)";
      const r = new Redactor(secretsOf(undefined, s.headers));
      target = r.scrub(target).replace(/\[url\]/g, target);
    } else {
      target = [s.command, ...(s.args ?? [])].join(" ");
      target = new Redactor(Object.values(s.env ?? {})).scrub(target);
    }
    return { name: s.name, transport: s.transport, target, source: s.source };
  });
  if (json) return `${JSON.stringify({ servers: shown })}\n`;
  if (shown.length === 0) return "(no servers configured)\n";
  return table(
    ["NAME", "TRANSPORT", "SOURCE", "TARGET"],
    shown.map((s) => [s.name, s.transport, s.source, s.target]),
    style,
  );
}
