// The event stream's items, each handed to the part of the page it concerns.

import { isObj, type Obj, strOf } from "./api.ts";
import { askDone, queueAsk } from "./asks.ts";
import { recordMessage } from "./history.ts";
import { logLine } from "./logs.ts";
import { renderServers, renderView } from "./nav.ts";
import { resourceUpdated } from "./resources.ts";
import { current, servers, toolCache, view } from "./state.ts";
import { onProgress, toolsChanged } from "./tools.ts";

/** The last item seen: a stream that reconnects replays what the explorer kept, seen or not. */
let lastSeq = 0;

export function onItem(item: Obj): void {
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
