// The history view: each message to and from the current server, newest last, a request replayed
// from its entry, and the list exported as a JSON file.

import { REPLAYABLE } from "../replayable.ts";
import { errorLine, isObj, type Json, type Obj, post, strOf } from "./api.ts";
import { bytes, el, fill, tree } from "./dom.ts";
import { current, history, MAX_HISTORY, view, viewBox } from "./state.ts";

/** The params of a request entry: the message's own (off the wire) or the entry's body (the explorer's). */
function paramsOf(m: Obj): Obj | undefined {
  try {
    const doc = JSON.parse(strOf(m.body)) as Json;
    if (!isObj(doc)) return undefined;
    if (doc.jsonrpc === "2.0") return isObj(doc.params) ? doc.params : {};
    return doc;
  } catch {
    return undefined;
  }
}

function historyEntry(m: Obj): HTMLElement {
  const when = new Date(Number(m.at)).toISOString().slice(11, 23);
  const method = strOf(m.method);
  const params = m.dir === "out" && REPLAYABLE.has(method) ? paramsOf(m) : undefined;
  const replayed = el("div", { class: "replayed" });
  const replay = params
    ? el(
        "button",
        {
          type: "button",
          "aria-label": `Replay ${method}`,
          onclick: async () => {
            fill(replayed, el("p", { class: "muted" }, `Sending ${method} again…`));
            const answer = await post("replay", { server: strOf(m.server), method, params });
            fill(
              replayed,
              answer.ok
                ? tree(answer.result ?? null, "result")
                : el("p", { class: "error", role: "alert" }, errorLine(answer.error)),
            );
          },
        },
        "Replay",
      )
    : null;
  return el(
    "li",
    {},
    el(
      "details",
      {},
      el(
        "summary",
        {},
        `${m.dir === "out" ? "→" : "←"} ${method} · ${bytes(Number(m.bytes) || 0)} · ${when}`,
      ),
      el("pre", { class: "text" }, strOf(m.body)),
      replay,
      replayed,
    ),
  );
}
const historyList = el("ol", { class: "history" });

/** The current server's history as a JSON file the browser saves. */
function exportHistory(): void {
  const entries = history.filter((m) => m.server === current);
  const url = URL.createObjectURL(new Blob([JSON.stringify(entries, null, 2)], { type: "application/json" }));
  const link = el("a", { href: url, download: "tether-history.json" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function historyView(): void {
  fill(historyList, history.filter((m) => m.server === current).map(historyEntry));
  fill(
    viewBox,
    el("h2", {}, "Messages"),
    el(
      "div",
      { class: "row" },
      el("p", { class: "muted" }, "Each request, result and notification, newest last (redacted)."),
      el("button", { type: "button", onclick: exportHistory }, "Export"),
    ),
    historyList,
  );
}

/** A message sent or received: kept (the oldest dropped past the limit) and shown if its list is. */
export function recordMessage(item: Obj): void {
  history.push(item);
  if (history.length > MAX_HISTORY) history.shift();
  if (view === "History" && strOf(item.server) === current) historyList.append(historyEntry(item));
}
