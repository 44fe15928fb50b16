// The sidebar's servers and the view tabs: which server is picked, which view is shown, and the
// shown view rendered for the picked server.

import { isObj, post, strOf } from "./api.ts";
import { el, fill } from "./dom.ts";
import { historyView } from "./history.ts";
import { overview } from "./overview.ts";
import { promptsView } from "./prompts.ts";
import { resourcesView } from "./resources.ts";
import {
  current,
  leaveThen,
  servers,
  setCurrent,
  setView,
  VIEWS,
  type View,
  view,
  viewBox,
} from "./state.ts";
import { toolsView } from "./tools.ts";

export const serverList = el("ul", { class: "servers" });
export const viewButtons = VIEWS.map((name) =>
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

export function renderServers(): void {
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

export async function select(id: string): Promise<void> {
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

export function show(name: View): void {
  setView(name);
  for (const b of viewButtons) b.setAttribute("aria-pressed", b.textContent === name ? "true" : "false");
  renderView();
}

/** Renders the shown view once what the one on screen holds has ended (an app asked to end first). */
export function renderView(): void {
  leaveThen(draw);
}

function draw(): void {
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
