// The notifications pane: the server's log lines (and the explorer's own notes), the level shown
// from, and the level the server is asked to log at.

import { errorLine, type Obj, post, strOf } from "./api.ts";
import { el, uid } from "./dom.ts";
import { current } from "./state.ts";

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const logList = el("ol", { class: "logs", "aria-live": "polite" });
const levelFilter = el(
  "select",
  { id: uid() },
  LEVELS.map((l) => el("option", { value: l }, l)),
);
const serverLevel = el(
  "select",
  { id: uid() },
  LEVELS.map((l) => el("option", { value: l, selected: l === "info" }, l)),
);

/** The region named "Notifications". */
export function notificationsPane(): HTMLElement {
  levelFilter.addEventListener("change", filterLogs);
  return el(
    "section",
    { class: "notifications", "aria-label": "Notifications" },
    el("h2", {}, "Notifications"),
    el(
      "div",
      { class: "row" },
      el("label", { for: levelFilter.id }, "Show from"),
      levelFilter,
      el("label", { for: serverLevel.id }, "Server level"),
      serverLevel,
      el("button", { type: "button", onclick: setLevel }, "Set level"),
    ),
    logList,
  );
}

export function logLine(item: Obj): void {
  const level = strOf(item.level, "info");
  const data = typeof item.data === "string" ? item.data : JSON.stringify(item.data);
  const line = el(
    "li",
    { class: `log level-${level}`, "data-level": String(Math.max(0, LEVELS.indexOf(level))) },
    `${level}${item.logger ? ` [${strOf(item.logger)}]` : ""}: ${data}`,
  );
  line.hidden = Number(line.dataset.level) < LEVELS.indexOf(levelFilter.value);
  logList.append(line);
  while (logList.childElementCount > 500) logList.firstElementChild?.remove();
}
function filterLogs(): void {
  const min = LEVELS.indexOf(levelFilter.value);
  for (const li of logList.children)
    (li as HTMLElement).hidden = Number((li as HTMLElement).dataset.level) < min;
}
async function setLevel(): Promise<void> {
  if (!current) return;
  const answer = await post("setLevel", { server: current, level: serverLevel.value });
  logLine({
    level: "info",
    logger: "tether",
    data: answer.ok ? `server level set to ${serverLevel.value}` : errorLine(answer.error),
  });
}
