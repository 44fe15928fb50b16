// The page's one way to make elements. Text from a server is only ever set as text (a text node
// or an attribute value), never parsed as markup (S9).

type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;
type Child = Node | string | number | null | undefined | false;

/** An element with attributes (`on…` functions become listeners) and children (strings as text). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "value" && "value" in node) (node as HTMLInputElement).value = String(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces every child of `node`. */
export function fill(node: Element, ...children: (Child | Child[])[]): void {
  node.replaceChildren();
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

let ids = 0;
/** A fresh id for label/aria wiring. */
export const uid = (prefix = "f"): string => `${prefix}${++ids}`;

/** A byte count as people read it. */
export function bytes(n: number): string {
  return n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / 1048576).toFixed(1)} MiB`;
}

/** A JSON value as a collapsible tree (details/summary), every string as text. */
export function tree(value: unknown, label = "value", depth = 0): Node {
  if (value === null || typeof value !== "object")
    return el(
      "div",
      { class: "leaf" },
      el("span", { class: "key" }, `${label}: `),
      el(
        "span",
        { class: `v-${value === null ? "null" : typeof value}` },
        JSON.stringify(value) ?? "undefined",
      ),
    );
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  const details = el(
    "details",
    { class: "node", open: depth < 2 },
    el("summary", {}, `${label} ${Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}`),
  );
  for (const [k, v] of entries.slice(0, 500)) details.append(tree(v, k, depth + 1));
  if (entries.length > 500) details.append(el("div", { class: "muted" }, `… ${entries.length - 500} more`));
  return details;
}
