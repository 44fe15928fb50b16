// The explorer's page: servers in a sidebar; overview, tools, resources, prompts and the message
// history as views; calls in flight; the log pane; the server's questions as dialogs. Everything
// a server sent is set as text (dom.ts), never as markup.
//
// This module builds the frame and starts the feed; each view, pane and dialog is its own module
// (state.ts owns what they share; nav.ts picks the server and the view; events.ts dispatches the feed).

import { get, isObj, type Json, post, strOf } from "./api.ts";
import { dialog } from "./asks.ts";
import { el } from "./dom.ts";
import { onItem } from "./events.ts";
import { notificationsPane } from "./logs.ts";
import { renderServers, renderView, serverList, show, viewButtons } from "./nav.ts";
import { readWhenShown } from "./resources.ts";
import { linkOpener } from "./result.ts";
import { servers, setCurrent, viewBox } from "./state.ts";
import { inFlight } from "./tools.ts";
import "./apps/view.ts";

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

// A resource link opens the resources view and reads the resource there.
linkOpener.open = (uri) => {
  readWhenShown(uri);
  show("Resources");
};

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
