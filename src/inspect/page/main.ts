// The explorer's page: servers in a sidebar; overview, tools, resources, prompts and the message
// history as views; calls in flight; the log pane; the server's questions as dialogs. Everything
// a server sent is set as text (dom.ts), never as markup.

import { type Answer, errorLine, get, isObj, type Json, type Obj, post, strOf } from "./api.ts";
import { askDone, dialog, queueAsk } from "./asks.ts";
import { el, fill, tree, uid } from "./dom.ts";
import { schemaForm } from "./form.ts";
import { historyView, recordMessage } from "./history.ts";
import { logLine, notificationsPane } from "./logs.ts";
import { contentBlock, linkOpener, renderToolResult, resourceContents } from "./result.ts";
import {
  current,
  servers,
  setCurrent,
  setView,
  toolCache,
  VIEWS,
  type View,
  view,
  viewBox,
} from "./state.ts";
import "./apps/view.ts";

let selectedTool: string | undefined;
let toolFilter = "";
const subscribed = new Set<string>();

// ---- the frame ----
const serverList = el("ul", { class: "servers" });
const viewButtons = VIEWS.map((name) =>
  el(
    "button",
    {
      type: "button",
      class: "tab",
      "aria-pressed": name === view ? "true" : "false",
      onclick: () => show(name),
    },
    name,
  ),
);
const inFlight = el("ul", { class: "inflight" });

function frame(): HTMLElement {
  return el(
    "div",
    { class: "layout" },
    el(
      "nav",
      { class: "sidebar", "aria-label": "Servers" },
      el("h1", {}, "tether inspect"),
      el("h2", {}, "Servers"),
      serverList,
    ),
    el(
      "main",
      {},
      el("div", { class: "tabs", role: "toolbar", "aria-label": "Views" }, viewButtons),
      viewBox,
      el(
        "section",
        { class: "calls", "aria-label": "Calls in flight" },
        el("h2", {}, "Calls in flight"),
        inFlight,
      ),
    ),
    notificationsPane(),
    dialog,
  );
}

// ---- servers ----
function renderServers(): void {
  fill(
    serverList,
    [...servers.values()].map((s) => {
      const id = strOf(s.id);
      const info = isObj(s.serverInfo) ? s.serverInfo : {};
      const facts = [
        strOf(s.state),
        strOf(s.era),
        strOf(s.protocolVersion),
        strOf(s.transport),
        strOf(info.version),
      ]
        .filter(Boolean)
        .join(" · ");
      return el(
        "li",
        {},
        el(
          "button",
          {
            type: "button",
            class: `server state-${strOf(s.state)}`,
            "aria-current": id === current ? "true" : undefined,
            onclick: () => select(id),
          },
          el("span", { class: "name" }, strOf(info.name, strOf(s.name))),
          info.name ? el("span", { class: "facts" }, strOf(s.name)) : null,
          el("span", { class: "facts" }, facts),
        ),
      );
    }),
  );
}

async function select(id: string): Promise<void> {
  setCurrent(id);
  renderServers();
  const s = servers.get(id);
  if (s && (s.state === "idle" || s.state === "closed")) {
    renderView();
    await post("connect", { server: id });
    return;
  }
  renderView();
}

function show(name: View): void {
  setView(name);
  for (const b of viewButtons) b.setAttribute("aria-pressed", b.textContent === name ? "true" : "false");
  renderView();
}

function renderView(): void {
  const s = current ? servers.get(current) : undefined;
  if (!s) {
    const none = servers.size
      ? "Pick a server."
      : "No servers: give a target, or add servers to a config file.";
    fill(viewBox, el("p", { class: "muted" }, none));
  } else if (s.state === "connecting" && view !== "Overview")
    fill(viewBox, el("p", { class: "muted" }, `Connecting to ${strOf(s.name)}…`));
  else if (view === "Overview" || s.state !== "open") overview(s);
  else if (view === "Tools") void toolsView(s);
  else if (view === "Resources") void resourcesView(s);
  else if (view === "Prompts") void promptsView(s);
  else historyView();
}

// ---- overview ----
function overview(s: Obj): void {
  const id = strOf(s.id);
  const info = isObj(s.serverInfo) ? s.serverInfo : {};
  const e = s.error;
  fill(
    viewBox,
    el("h2", {}, strOf(s.name)),
    el(
      "div",
      { class: "row" },
      el(
        "button",
        { type: "button", onclick: () => post("reconnect", { server: id }) },
        s.state === "open" ? "Reconnect" : "Connect",
      ),
      el(
        "button",
        { type: "button", onclick: () => post("disconnect", { server: id }), disabled: s.state !== "open" },
        "Disconnect",
      ),
    ),
    el(
      "dl",
      { class: "facts" },
      [
        ["State", strOf(s.state)],
        ["Server", `${strOf(info.name, "?")} ${strOf(info.version)}`],
        ["Protocol", `${strOf(s.era)} ${strOf(s.protocolVersion)}`],
        ["Transport", strOf(s.transport)],
        ["Source", strOf(s.source)],
        ["Attempts", String(s.attempts ?? "")],
      ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]),
    ),
    isObj(e)
      ? el(
          "section",
          { class: "failed", "aria-label": "Connect error" },
          el("h3", {}, "The connect failed"),
          el(
            "dl",
            { class: "facts" },
            ["code", "reason", "stage", "phase", "message", "hint"].flatMap((k) => [
              el("dt", {}, k),
              el("dd", {}, strOf(e[k], String(e[k] ?? ""))),
            ]),
          ),
        )
      : null,
    el(
      "section",
      { "aria-label": "Establishment timeline" },
      el("h3", {}, "Establishment timeline"),
      timeline(Array.isArray(s.timeline) ? s.timeline : []),
    ),
    s.instructions ? part("Instructions", el("pre", { class: "text" }, strOf(s.instructions))) : null,
    s.capabilities ? part("Capabilities", tree(s.capabilities, "capabilities")) : null,
    s.extensions ? part("Extensions", tree(s.extensions, "extensions")) : null,
    rootsEditor(s),
  );
}

/** A titled part of the overview, a region named by its title. */
const part = (title: string, body: Node): HTMLElement =>
  el("section", { "aria-label": title }, el("h3", {}, title), body);

function timeline(events: Json[]): HTMLElement {
  const ends = events.filter(
    (e): e is Obj => isObj(e) && (e.type === "stage_end" || e.type === "attempt_end"),
  );
  const total = Math.max(1, ...events.filter(isObj).map((e) => Number(e.elapsedMs) || 0));
  if (!ends.length) return el("p", { class: "muted" }, "No establishment yet.");
  const rows = events.filter(isObj).flatMap((e) => {
    if (e.type === "stage_end") {
      const dur = Number(e.durationMs) || 0;
      const start = (Number(e.elapsedMs) || 0) - dur;
      const bar = el("div", { class: `bar ${e.ok ? "ok" : "bad"}` });
      bar.style.setProperty("margin-left", `${(start / total) * 100}%`);
      bar.style.setProperty("width", `${Math.max(0.5, (dur / total) * 100)}%`);
      return [
        el(
          "li",
          { class: "stage" },
          el("span", { class: "label" }, `attempt ${String(e.attempt)} · ${strOf(e.stage)}`),
          el("span", { class: "track" }, bar),
          el(
            "span",
            { class: "ms" },
            `${start.toFixed(1)} + ${dur.toFixed(1)} ms ${e.ok ? "ok" : `failed: ${strOf(e.code)}/${strOf(e.reason)}`}`,
          ),
        ),
      ];
    }
    if (e.type === "recovery" || e.type === "era_evidence" || e.type === "established")
      return [
        el(
          "li",
          { class: "event" },
          `${(Number(e.elapsedMs) || 0).toFixed(1)} ms · ${strOf(e.type)} ${strOf(e.decision ?? e.evidence ?? e.protocolVersion)} ${strOf(e.why ?? e.era)}`,
        ),
      ];
    return [];
  });
  return el("ol", { class: "timeline" }, rows);
}

function rootsEditor(s: Obj): HTMLElement {
  const id = strOf(s.id);
  const roots = Array.isArray(s.roots) ? s.roots.filter(isObj) : [];
  const areaId = uid();
  const area = el(
    "textarea",
    { id: areaId, rows: 3, spellcheck: "false" },
    roots.map((r) => strOf(r.uri)).join("\n"),
  );
  return el(
    "section",
    { "aria-label": "Roots" },
    el("h3", {}, "Roots"),
    el("label", { for: areaId }, "Roots offered to the server, one URI a line"),
    area,
    el(
      "button",
      {
        type: "button",
        onclick: () =>
          post("roots", {
            server: id,
            roots: area.value
              .split("\n")
              .map((l) => l.trim())
              .filter(Boolean)
              .map((uri) => ({ uri })),
          }),
      },
      "Save roots",
    ),
  );
}

// ---- tools ----
const BADGES: [string, string][] = [
  ["readOnlyHint", "read-only"],
  ["destructiveHint", "destructive"],
  ["idempotentHint", "idempotent"],
  ["openWorldHint", "open world"],
];

async function toolsOf(id: string): Promise<Obj[] | Answer> {
  const cached = toolCache.get(id);
  if (cached) return cached;
  const answer = await post("tools", { server: id });
  if (!answer.ok) return answer;
  const tools = Array.isArray(answer.tools) ? answer.tools.filter(isObj) : [];
  toolCache.set(id, tools);
  return tools;
}

let refreshTools: (() => Promise<void>) | undefined;

async function toolsView(s: Obj): Promise<void> {
  const id = strOf(s.id);
  const listed = await toolsOf(id);
  if (current !== id || view !== "Tools") return;
  if (!Array.isArray(listed))
    return fill(viewBox, el("p", { class: "error", role: "alert" }, errorLine(listed.error)));
  let tools = listed;
  const searchId = uid();
  const count = el("p", { class: "muted" }, `${listed.length} tools`);
  const search = el("input", {
    id: searchId,
    type: "search",
    value: toolFilter,
    placeholder: "name or words",
  });
  const list = el("ul", { class: "tools" });
  const detail = el("div", { class: "detail" });
  const renderList = () => {
    const words = toolFilter.toLowerCase();
    const shown = tools.filter(
      (t) =>
        !words || `${strOf(t.name)} ${strOf(t.title)} ${strOf(t.description)}`.toLowerCase().includes(words),
    );
    count.textContent =
      shown.length === tools.length ? `${tools.length} tools` : `${shown.length} of ${tools.length} tools`;
    fill(
      list,
      shown.map((t) => {
        const a = isObj(t.annotations) ? t.annotations : {};
        return el(
          "li",
          {},
          el(
            "button",
            {
              type: "button",
              class: "tool",
              "aria-pressed": t.name === selectedTool ? "true" : "false",
              onclick: () => pick(t),
            },
            el("span", { class: "name" }, strOf(t.name)),
            BADGES.filter(([k]) => a[k] === true).map(([, label]) =>
              el("span", { class: "badge" }, ` ${label}`),
            ),
          ),
        );
      }),
    );
  };
  const pick = (t: Obj) => {
    selectedTool = strOf(t.name);
    renderList();
    toolDetail(detail, id, t);
  };
  search.addEventListener("input", () => {
    toolFilter = search.value;
    renderList();
  });
  // A changed list replaces the buttons only: the form being filled stays as it is.
  refreshTools = async () => {
    const fresh = await toolsOf(id);
    if (current !== id || view !== "Tools" || !Array.isArray(fresh)) return;
    tools = fresh;
    renderList();
  };
  renderList();
  fill(
    viewBox,
    el(
      "div",
      { class: "split" },
      el("div", { class: "list" }, el("label", { for: searchId }, "Search tools"), search, count, list),
      detail,
    ),
  );
  const chosen = tools.find((t) => t.name === selectedTool) ?? tools[0];
  if (chosen) pick(chosen);
}

function toolDetail(box: HTMLElement, server: string, t: Obj): void {
  const a = isObj(t.annotations) ? t.annotations : {};
  const form = schemaForm(t.inputSchema ?? {});
  const result = el("section", { class: "result", "aria-label": "Result" });
  const problem = el("p", { class: "error", role: "alert", hidden: true });
  const run = (asTask: boolean) => {
    const got = form.read();
    problem.hidden = !got.error;
    problem.textContent = got.error ?? "";
    if (got.error || !got.value) return;
    void callTool(server, t, got.value, asTask, result);
  };
  const taskSupport = isObj(t.execution) ? strOf(t.execution.taskSupport) : "";
  fill(
    box,
    el("h2", {}, strOf(t.title, strOf(t.name))),
    t.title ? el("p", { class: "muted" }, strOf(t.name)) : null,
    el(
      "div",
      { class: "badges" },
      BADGES.filter(([k]) => a[k] !== undefined).map(([k, label]) =>
        el("span", { class: `badge ${a[k] ? "on" : "off"}` }, `${a[k] ? "" : "not "}${label}`),
      ),
    ),
    t.description ? el("p", { class: "desc" }, strOf(t.description)) : null,
    form.node,
    problem,
    el(
      "div",
      { class: "row" },
      el("button", { type: "button", class: "primary", onclick: () => run(false) }, "Run"),
      el(
        "button",
        {
          type: "button",
          onclick: () => run(true),
          title: taskSupport ? `task support: ${taskSupport}` : undefined,
        },
        "Run as task",
      ),
    ),
    result,
    t.outputSchema
      ? el("details", {}, el("summary", {}, "Output schema"), tree(t.outputSchema, "outputSchema"))
      : null,
  );
}

const calls = new Map<string, { progress: HTMLProgressElement; note: HTMLElement; row: HTMLElement }>();

async function callTool(
  server: string,
  tool: Obj,
  args: Obj,
  asTask: boolean,
  result: HTMLElement,
): Promise<void> {
  const callId = `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const name = strOf(tool.name);
  const progress = el("progress", { "aria-label": `${name} progress` });
  const note = el("span", { class: "muted" }, asTask ? " as a task" : "");
  const row = el(
    "li",
    {},
    el("span", { class: "name" }, name),
    " ",
    progress,
    note,
    " ",
    el("button", { type: "button", onclick: () => post("cancel", { server, callId }) }, "Cancel"),
  );
  calls.set(callId, { progress, note, row });
  inFlight.append(row);
  fill(result, el("p", { class: "muted" }, `Running ${name}…`));
  const answer = await post("call", { server, tool: name, args, callId, task: asTask });
  calls.delete(callId);
  row.remove();
  renderToolResult(result, {
    server,
    tool,
    args,
    asTask,
    ...(answer.ok
      ? {
          result: isObj(answer.result) ? answer.result : {},
          ms: Number(answer.ms),
          bytes: Number(answer.bytes),
          verdict: answer.verdict ?? null,
        }
      : { error: answer.error ?? null }),
  });
}

function onProgress(item: Obj): void {
  const call = calls.get(strOf(item.call));
  const p = isObj(item.progress) ? item.progress : {};
  if (!call) return;
  if (isObj(p.task)) {
    call.note.textContent = ` task ${strOf(p.task.status)}${p.task.statusMessage ? `: ${strOf(p.task.statusMessage)}` : ""}`;
    return;
  }
  if (typeof p.total === "number" && p.total > 0) {
    call.progress.max = p.total;
    call.progress.value = Number(p.progress) || 0;
  }
  call.note.textContent = ` ${String(p.progress)}${typeof p.total === "number" ? `/${p.total}` : ""}${p.message ? ` ${strOf(p.message)}` : ""}`;
}

// ---- resources, templates, prompts ----
/** The objects a listing answered under `key`; none when it failed. */
const listed = (answer: Answer, key: string): Obj[] => {
  const list = answer.ok ? answer[key] : undefined;
  return Array.isArray(list) ? list.filter(isObj) : [];
};

/** A heading, the listing's error if it failed, and its buttons. */
function titledList(title: string, answer: Answer, buttons: HTMLElement[]): HTMLElement[] {
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
function split(list: (HTMLElement | HTMLElement[] | null)[] | HTMLElement[], detail: HTMLElement): void {
  fill(viewBox, el("div", { class: "split" }, el("div", { class: "list" }, list.flat()), detail));
}
async function resourcesView(s: Obj): Promise<void> {
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
let lastRead: ((uri: string) => Promise<void>) | undefined;
/** A resource link's URI, read once the resources view is shown. */
let pendingRead: string | undefined;
linkOpener.open = (uri) => {
  pendingRead = uri;
  show("Resources");
};

/** The variables of an RFC 6570 template. */
const variables = (template: string): { name: string; raw: boolean }[] =>
  [...template.matchAll(/\{([+#./;?&]?)([^}]+)\}/g)].flatMap((m) =>
    m[2]!.split(",").map((n) => ({ name: n.replace(/[*:].*$/, ""), raw: m[1] === "+" || m[1] === "#" })),
  );

/** An input that asks the server for completions as the user types. */
function completing(
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

async function promptsView(s: Obj): Promise<void> {
  const server = strOf(s.id);
  const answer = await post("prompts", { server });
  if (current !== server || view !== "Prompts") return;
  const prompts = listed(answer, "prompts");
  const detail = el("div", { class: "detail" });
  const pick = (p: Obj) => {
    const inputs = new Map<string, HTMLInputElement>();
    const values = () => Object.fromEntries([...inputs].map(([k, i]) => [k, i.value]));
    const args = Array.isArray(p.arguments) ? p.arguments.filter(isObj) : [];
    const out = el("section", { class: "result", "aria-label": "Prompt" });
    fill(
      detail,
      el("h2", {}, strOf(p.name)),
      p.description ? el("p", { class: "desc" }, strOf(p.description)) : null,
      args.map((a) => {
        const f = completing(server, { type: "ref/prompt", name: strOf(p.name) }, strOf(a.name), values);
        inputs.set(strOf(a.name), f.input);
        return f.node;
      }),
      el(
        "button",
        {
          type: "button",
          class: "primary",
          onclick: async () => {
            const given: Obj = {};
            for (const [k, v] of Object.entries(values())) if (v !== "") given[k] = v;
            const got = await post("prompt", { server, name: strOf(p.name), args: given });
            const messages =
              got.ok && isObj(got.result) && Array.isArray(got.result.messages)
                ? got.result.messages.filter(isObj)
                : [];
            fill(
              out,
              got.ok
                ? messages.map((m) =>
                    el(
                      "div",
                      { class: "message" },
                      el("strong", {}, strOf(m.role)),
                      contentBlock(m.content ?? null),
                    ),
                  )
                : el("p", { class: "error", role: "alert" }, errorLine(got.error)),
            );
          },
        },
        "Get prompt",
      ),
      out,
    );
  };
  split(
    titledList(
      "Prompts",
      answer,
      prompts.map((p) => el("button", { type: "button", onclick: () => pick(p) }, strOf(p.name))),
    ),
    detail,
  );
}

// ---- the feed ----
/** The last item seen: a stream that reconnects replays what the explorer kept, seen or not. */
let lastSeq = 0;

function onItem(item: Obj): void {
  const seq = Number(item.seq);
  if (seq <= lastSeq) return;
  lastSeq = seq;
  const server = strOf(item.server);
  switch (item.kind) {
    case "server": {
      const before = servers.get(server);
      if (isObj(item.summary)) servers.set(server, item.summary);
      renderServers();
      if (server === current && before?.state !== servers.get(server)?.state) {
        toolCache.delete(server);
        renderView();
      } else if (server === current && view === "Overview") renderView();
      break;
    }
    case "log":
      logLine(item);
      break;
    case "list_changed":
      logLine({ level: "info", logger: "notification", data: `${strOf(item.list)} changed` });
      if (item.list === "tools") {
        toolCache.delete(server);
        if (server === current && view === "Tools") void refreshTools?.();
      } else if (server === current && view.toLowerCase() === item.list) renderView();
      break;
    case "updated":
      logLine({ level: "info", logger: "notification", data: `resource updated: ${strOf(item.uri)}` });
      if (subscribed.has(strOf(item.uri)) && view === "Resources") void lastRead?.(strOf(item.uri));
      break;
    case "progress":
      onProgress(item);
      break;
    case "message":
      recordMessage(item);
      break;
    case "ask":
      queueAsk(item);
      break;
    case "ask_done":
      askDone(item);
      break;
  }
}

async function start(): Promise<void> {
  document.getElementById("app")!.replaceWith(frame());
  const list = await get("/api/servers");
  for (const s of Array.isArray(list.servers) ? list.servers.filter(isObj) : []) servers.set(strOf(s.id), s);
  renderServers();
  const events = new EventSource("/api/events");
  events.addEventListener("message", (e) => {
    try {
      const item = JSON.parse((e as MessageEvent<string>).data) as Json;
      if (isObj(item)) onItem(item);
    } catch {}
  });
  const first = [...servers.values()][0];
  const fromCommandLine = [...servers.values()].filter((s) => s.source === "command line");
  if (first) {
    setCurrent(strOf(first.id));
    renderServers();
    renderView();
  } else renderView();
  // Targets named on the command line connect at once; the config files' wait for a pick.
  await Promise.all(
    fromCommandLine.map((s) => (s.state === "idle" ? post("connect", { server: strOf(s.id) }) : undefined)),
  );
}

void start();
