// A tool call's outcome, in the region named "Result": its content blocks (text as text, images
// and audio decoded, resource links, embedded resources), structuredContent as a tree with the
// output schema's verdict, a tool error shown as one, and the call's time and size.
//
// Other views hook in here: a function pushed onto `resultViews` is asked first and renders the
// result itself by returning true (the MCP Apps view does, for a tool whose `_meta.ui.resourceUri`
// names a `ui://` resource).
import { errorLine, isObj, type Json, type Obj, strOf } from "./api.ts";
import { bytes, el, fill, tree } from "./dom.ts";

export interface ToolCall {
  server: string;
  tool: Obj;
  args: Obj;
  /** The CallToolResult, when the call returned one. */
  result?: Obj;
  /** The error record, when the call failed. */
  error?: Json;
  ms?: number;
  bytes?: number;
  verdict?: Json;
  asTask?: boolean;
}

/** Views that may render a result instead of (or before) the default; true means done. */
export const resultViews: ((container: HTMLElement, call: ToolCall) => boolean)[] = [];

/** Opens a resource link (set by the page: it reads the resource and shows it). */
export const linkOpener: { open: (uri: string) => void } = { open: () => {} };

const SAFE_MIME = /^[a-z]+\/[a-z0-9.+-]+$/i;

/** Base64 to an object URL of that type; undefined when the data or type is unusable. */
export function blobUrl(base64: string, mime: string): string | undefined {
  if (!SAFE_MIME.test(mime)) return undefined;
  try {
    const raw = atob(base64);
    const buf = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) buf[i] = raw.charCodeAt(i);
    return URL.createObjectURL(new Blob([buf], { type: mime }));
  } catch {
    return undefined;
  }
}

/** One content block. */
export function contentBlock(block: Json): HTMLElement {
  if (!isObj(block)) return el("pre", {}, JSON.stringify(block));
  switch (block.type) {
    case "text":
      return el("pre", { class: "text" }, strOf(block.text));
    case "image":
    case "audio": {
      const mime = strOf(block.mimeType);
      const url = blobUrl(strOf(block.data), mime);
      if (!url)
        return el("p", { class: "muted" }, `${block.type} (${mime || "no type"}) could not be decoded`);
      return block.type === "image"
        ? el("figure", {}, el("img", { src: url, alt: `image (${mime})` }), el("figcaption", {}, mime))
        : el(
            "figure",
            {},
            el("audio", { src: url, controls: true, "aria-label": `audio (${mime})` }),
            el("figcaption", {}, mime),
          );
    }
    case "resource_link":
      return el(
        "div",
        { class: "link" },
        "resource link: ",
        el(
          "button",
          { type: "button", onclick: () => linkOpener.open(strOf(block.uri)) },
          `Open ${strOf(block.uri)}`,
        ),
        block.name ? el("span", { class: "muted" }, ` ${strOf(block.name)}`) : null,
        block.description ? el("div", { class: "desc" }, strOf(block.description)) : null,
      );
    case "resource":
      return resourceContents(block.resource ?? null);
    default:
      return el("div", {}, tree(block, strOf(block.type, "block")));
  }
}

/** A resource's contents (embedded in a result, or read). */
export function resourceContents(contents: Json): HTMLElement {
  if (!isObj(contents)) return el("pre", {}, JSON.stringify(contents));
  const head = el(
    "div",
    { class: "muted" },
    `resource ${strOf(contents.uri)}${contents.mimeType ? ` (${strOf(contents.mimeType)})` : ""}`,
  );
  if (typeof contents.text === "string")
    return el("div", { class: "embedded" }, head, el("pre", { class: "text" }, contents.text));
  const mime = strOf(contents.mimeType);
  if (typeof contents.blob === "string") {
    const url = /^(image|audio)\//.test(mime) ? blobUrl(contents.blob, mime) : undefined;
    return el(
      "div",
      { class: "embedded" },
      head,
      url && mime.startsWith("image/") ? el("img", { src: url, alt: `image (${mime})` }) : null,
      url && mime.startsWith("audio/")
        ? el("audio", { src: url, controls: true, "aria-label": `audio (${mime})` })
        : null,
      el("div", { class: "muted" }, `${bytes(Math.floor((contents.blob.length * 3) / 4))} of binary data`),
    );
  }
  return el("div", { class: "embedded" }, head, tree(contents, "contents"));
}

/** Renders `call`'s outcome into `container` (the Result region). */
export function renderToolResult(container: HTMLElement, call: ToolCall): void {
  for (const view of resultViews) if (view(container, call)) return;
  const meta = el(
    "div",
    { class: "meta" },
    call.ms !== undefined ? `${call.ms.toFixed(1)} ms` : "",
    call.bytes !== undefined ? ` · ${bytes(call.bytes)}` : "",
    call.asTask ? " · as a task" : "",
  );
  if (call.error !== undefined) {
    const e = isObj(call.error) ? call.error : {};
    fill(
      container,
      el("p", { class: "error", role: "alert" }, errorLine(call.error)),
      e.hint ? el("p", { class: "hint" }, `hint: ${strOf(e.hint)}`) : null,
    );
    return;
  }
  const r = call.result ?? {};
  const blocks = Array.isArray(r.content) ? r.content : [];
  fill(
    container,
    r.isError === true
      ? el("p", { class: "error", role: "alert" }, "The tool reported an error:")
      : el("p", { class: "ok" }, "ok"),
    meta,
    blocks.map(contentBlock),
    r.structuredContent !== undefined
      ? el(
          "section",
          { class: "structured", "aria-label": "structuredContent" },
          el("h4", {}, "structuredContent"),
          call.verdict ? el("p", { class: "verdict" }, strOf(call.verdict)) : null,
          tree(r.structuredContent, "structuredContent"),
        )
      : null,
  );
}
