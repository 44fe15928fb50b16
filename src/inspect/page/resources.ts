// The resources view: the resources and templates listed, a resource read (and subscribed to), a
// template's variables filled with the server's completions as the user types. The listing helpers
// and the completing input serve the prompts view too.

import { type Answer, errorLine, isObj, type Obj, post, strOf } from "./api.ts";
import { el, fill, uid } from "./dom.ts";
import { resourceContents } from "./result.ts";
import { current, view, viewBox } from "./state.ts";

const subscribed = new Set<string>();
let lastRead: ((uri: string) => Promise<void>) | undefined;
/** A resource link's URI, read once the resources view is shown. */
let pendingRead: string | undefined;

/** Reads `uri` once the resources view is next shown (a resource link opened). */
export const readWhenShown = (uri: string): void => {
  pendingRead = uri;
};

/** A resource changed: read it again when it is subscribed to and the resources view is shown. */
export function resourceUpdated(uri: string): void {
  if (subscribed.has(uri) && view === "Resources") void lastRead?.(uri);
}

/** The objects a listing answered under `key`; none when it failed. */
export const listed = (answer: Answer, key: string): Obj[] => {
  const list = answer.ok ? answer[key] : undefined;
  return Array.isArray(list) ? list.filter(isObj) : [];
};

/** A heading, the listing's error if it failed, and its buttons. */
export function titledList(title: string, answer: Answer, buttons: HTMLElement[]): HTMLElement[] {
  return [
    el("h2", {}, title),
    ...(answer.ok ? [] : [el("p", { class: "error" }, errorLine(answer.error))]),
    el(
      "ul",
      {},
      buttons.map((b) => el("li", {}, b)),
    ),
  ];
}

/** The view as a list beside what the list's items open. */
export function split(
  list: (HTMLElement | HTMLElement[] | null)[] | HTMLElement[],
  detail: HTMLElement,
): void {
  fill(viewBox, el("div", { class: "split" }, el("div", { class: "list" }, list.flat()), detail));
}

export async function resourcesView(s: Obj): Promise<void> {
  const server = strOf(s.id);
  const [res, tpl] = await Promise.all([post("resources", { server }), post("templates", { server })]);
  if (current !== server || view !== "Resources") return;
  const out = el("section", { class: "result", "aria-label": "Resource" });
  const read = async (uri: string) => {
    fill(out, el("p", { class: "muted" }, `Reading ${uri}…`));
    const answer = await post("read", { server, uri });
    const contents =
      answer.ok && isObj(answer.result) && Array.isArray(answer.result.contents)
        ? answer.result.contents
        : [];
    const sub = el(
      "button",
      { type: "button", "aria-pressed": subscribed.has(uri) ? "true" : "false" },
      subscribed.has(uri) ? "Unsubscribe" : "Subscribe",
    );
    sub.addEventListener("click", async () => {
      const on = subscribed.has(uri);
      const a = await post(on ? "unsubscribe" : "subscribe", { server, uri });
      if (a.ok) on ? subscribed.delete(uri) : subscribed.add(uri);
      void read(uri);
    });
    fill(
      out,
      el("h3", {}, uri),
      sub,
      answer.ok
        ? contents.map(resourceContents)
        : el("p", { class: "error", role: "alert" }, errorLine(answer.error)),
    );
  };
  lastRead = read;
  const resources = listed(res, "resources");
  const templates = listed(tpl, "templates");
  split(
    [
      titledList(
        "Resources",
        res,
        resources.map((r) =>
          el(
            "button",
            { type: "button", onclick: () => read(strOf(r.uri)) },
            strOf(r.name, strOf(r.uri)),
            el("span", { class: "muted" }, ` ${strOf(r.uri)}`),
          ),
        ),
      ),
      el("h2", {}, "Templates"),
      tpl.ok ? null : el("p", { class: "error" }, errorLine(tpl.error)),
      templates.map((t) => templateForm(server, t, read)),
    ],
    out,
  );
  if (pendingRead !== undefined) {
    const uri = pendingRead;
    pendingRead = undefined;
    void read(uri);
  }
}

/** The variables of an RFC 6570 template. */
const variables = (template: string): { name: string; raw: boolean }[] =>
  [...template.matchAll(/\{([+#./;?&]?)([^}]+)\}/g)].flatMap((m) =>
    m[2]!.split(",").map((n) => ({ name: n.replace(/[*:].*$/, ""), raw: m[1] === "+" || m[1] === "#" })),
  );

/** An input that asks the server for completions as the user types. */
export function completing(
  server: string,
  ref: Obj,
  name: string,
  values: () => Record<string, string>,
): { node: HTMLElement; input: HTMLInputElement } {
  const id = uid();
  const listId = uid("l");
  const input = el("input", { id, type: "text", list: listId, autocomplete: "off" });
  const options = el("datalist", { id: listId });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let seq = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++seq;
      const context: Obj = {};
      for (const [k, v] of Object.entries(values())) if (k !== name && v) context[k] = v;
      const answer = await post("complete", { server, ref, argument: { name, value: input.value }, context });
      if (mine !== seq || !answer.ok || !isObj(answer.result)) return;
      const completion = isObj(answer.result.completion) ? answer.result.completion : answer.result;
      const list = Array.isArray(completion.values) ? completion.values : [];
      fill(
        options,
        list.slice(0, 100).map((v) => el("option", { value: strOf(v) })),
      );
    }, 150);
  });
  return { node: el("div", { class: "field" }, el("label", { for: id }, name), input, options), input };
}

function templateForm(server: string, t: Obj, read: (uri: string) => Promise<void>): HTMLElement {
  const template = strOf(t.uriTemplate);
  const vars = variables(template);
  const inputs = new Map<string, HTMLInputElement>();
  const values = () => Object.fromEntries([...inputs].map(([k, i]) => [k, i.value]));
  const fields = vars.map((v) => {
    const f = completing(server, { type: "ref/resource", uri: template }, v.name, values);
    inputs.set(v.name, f.input);
    return f.node;
  });
  const expand = () =>
    template.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_m, op: string, names: string) =>
      names
        .split(",")
        .map((n) => {
          const value = inputs.get(n.replace(/[*:].*$/, ""))?.value ?? "";
          return op === "+" || op === "#" ? encodeURI(value) : encodeURIComponent(value);
        })
        .join(","),
    );
  return el(
    "fieldset",
    { class: "template" },
    el("legend", {}, strOf(t.name, template)),
    el("div", { class: "muted" }, template),
    fields,
    el("button", { type: "button", onclick: () => read(expand()) }, "Read"),
  );
}
