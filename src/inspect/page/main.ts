// The explorer's page: servers in a sidebar; overview, tools, resources, prompts and the message
// history as views; calls in flight; the log pane; the server's questions as dialogs. Everything
// a server sent is set as text (dom.ts), never as markup.

import { get, isObj, type Json, type Obj, post, strOf } from "./api.ts";
import { askDone, dialog, queueAsk } from "./asks.ts";
import { el, fill } from "./dom.ts";
import { historyView, recordMessage } from "./history.ts";
import { logLine, notificationsPane } from "./logs.ts";
import { overview } from "./overview.ts";
import { promptsView } from "./prompts.ts";
import { readWhenShown, resourcesView, resourceUpdated } from "./resources.ts";
import { linkOpener } from "./result.ts";
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
import { inFlight, onProgress, toolsChanged, toolsView } from "./tools.ts";
import "./apps/view.ts";

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

// A resource link opens the resources view and reads the resource there.
linkOpener.open = (uri) => {
  readWhenShown(uri);
  show("Resources");
};

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
      if (item.list === "tools") toolsChanged(server);
      else if (server === current && view.toLowerCase() === item.list) renderView();
      break;
    case "updated":
      logLine({ level: "info", logger: "notification", data: `resource updated: ${strOf(item.uri)}` });
      resourceUpdated(strOf(item.uri));
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
