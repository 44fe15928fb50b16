// The tools view: the searchable list, a tool's detail with its arguments form, the call (its row
// under "Calls in flight", its progress, its Cancel) and its result.

import { type Answer, errorLine, isObj, type Obj, post, strOf } from "./api.ts";
import { el, fill, tree, uid } from "./dom.ts";
import { schemaForm } from "./form.ts";
import { renderToolResult } from "./result.ts";
import { current, leaveThen, toolCache, view, viewBox } from "./state.ts";

let selectedTool: string | undefined;
let toolFilter = "";
/** The calls in flight, one row each. */
export const inFlight = el("ul", { class: "inflight" });

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

/** Refreshes the shown tools list; set while the tools view is built. */
let refreshTools: (() => Promise<void>) | undefined;

/** The server's tools changed: its cached list is stale, and a shown list is listed again. */
export function toolsChanged(server: string): void {
  toolCache.delete(server);
  if (server === current && view === "Tools") void refreshTools?.();
}

export async function toolsView(s: Obj): Promise<void> {
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
    leaveThen(() => toolDetail(detail, id, t));
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

export function onProgress(item: Obj): void {
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
