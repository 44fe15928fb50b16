// MCP Apps beside the Result region: a tool whose `_meta` names a `ui://` resource shows its result
// as usual and, below it, its app (host.ts mounts it in a sandboxed frame). The app's own tool
// calls go through the explorer's `call` operation, like a call from the page. A new result of the
// same tool view ends the app, and so does leaving the view: `ui/resource-teardown` is sent and its
// answer awaited (bounded) before the frame goes.
import { errorLine, isObj, type Obj, post, strOf } from "../api.ts";
import { el, fill } from "../dom.ts";
import { resultViews, type ToolCall } from "../result.ts";
import { holders } from "../state.ts";
import { type AppActivity, type AppHandle, type AppTool, mountApp } from "./host.ts";

/** Activity lines kept per app. */
const MAX_ACTIVITY_LINES = 200;

/** An app shown beside a Result region, and how it ends. */
interface ShownApp {
  handle?: AppHandle;
  end(why: string): Promise<void>;
}

const shownApps = new WeakMap<HTMLElement, ShownApp>();
let appCalls = 0;

/** The `ui://` resource a tool names (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`). */
export function appUri(tool: Obj): string | undefined {
  const meta = isObj(tool._meta) ? tool._meta : {};
  const nested = isObj(meta.ui) ? meta.ui.resourceUri : undefined;
  const uri = typeof nested === "string" ? nested : meta["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : undefined;
}

/** One activity as a line of text. */
function activityLine(a: AppActivity): string {
  switch (a.kind) {
    case "initialized":
      return `initialized ${a.app.name ?? ""} ${a.app.version ?? ""}`;
    case "call":
      return `tools/call ${a.name}: ${a.ok ? "ok" : `failed (${a.error ?? ""})`} in ${a.ms} ms`;
    case "log":
      return `log ${a.level}: ${JSON.stringify(a.data)}`;
    case "message":
      return `message: ${JSON.stringify(a.content)}`;
    case "model-context":
      return `model context: ${JSON.stringify(a.content)}`;
    case "link":
      return `link ${a.url}: ${a.opened ? "opened" : "declined"}`;
    case "size":
      return `height ${a.height} px`;
    case "refused":
      return `refused: ${a.why}`;
    case "closed":
      return `closed: ${a.why}`;
  }
}

resultViews.push((container: HTMLElement, call: ToolCall): boolean => {
  // The app lives beside the Result region, not in it: a new run clears the region at once, while
  // the app shown stays until the new result comes, and is then asked to end before it goes.
  const previous = shownApps.get(container);
  if (previous) {
    shownApps.delete(container);
    void previous.end("another result replaced it");
  }
  const uri = appUri(call.tool);
  if (uri && call.error === undefined && call.result) {
    const box = el("section", { class: "app", "aria-label": `App ${uri}` });
    container.after(box);
    const shown: ShownApp = {
      async end(why) {
        holders.delete(leave);
        await shown.handle?.unmount(why);
        box.remove();
      },
    };
    const leave = () => shown.end("its view was left");
    holders.add(leave);
    shownApps.set(container, shown);
    void showApp(shown, box, uri, call);
  }
  // The result itself is shown as for any tool.
  return false;
});

async function showApp(shown: ShownApp, box: HTMLElement, uri: string, call: ToolCall): Promise<void> {
  const server = call.server;
  const name = strOf(call.tool.name);
  fill(box, el("p", { class: "muted" }, `Loading the app ${uri}…`));
  const [answer, listed] = await Promise.all([
    post("app", { server, tool: name }),
    post("tools", { server }),
  ]);
  if (!box.isConnected) return;
  if (!answer.ok) {
    fill(
      box,
      el(
        "p",
        { class: "error", role: "alert" },
        `The app ${uri} could not be shown: ${errorLine(answer.error)}`,
      ),
    );
    return;
  }
  const refused = Array.isArray(answer.refused) ? answer.refused.map((r) => strOf(r)) : [];
  const tools = (Array.isArray(listed.tools) ? listed.tools.filter(isObj) : []) as unknown as AppTool[];
  const activity = el("ol", { class: "app-activity" });
  const frameBox = el("div", { class: "app-frame" });
  fill(
    box,
    el("h4", {}, `App of ${name}: ${uri}`),
    el(
      "p",
      { class: "muted" },
      `The server's own page, sandboxed: another origin (${strOf(answer.origin)}), no access to the explorer.`,
    ),
    refused.length > 0
      ? el("p", { class: "warn" }, `Left out of the app's CSP (not plain origins): ${refused.join(", ")}`)
      : null,
    frameBox,
    el(
      "details",
      {},
      el("summary", {}, "App activity"),
      el("p", { class: "muted" }, `CSP: ${strOf(answer.csp)}`),
      activity,
    ),
  );
  const handle = mountApp(frameBox, {
    url: strOf(answer.url),
    tool: call.tool as unknown as AppTool,
    tools,
    input: call.args,
    result: call.result,
    title: `App of ${name} (${uri})`,
    hostInfo: { name: "tether inspect", version: "1" },
    ...(isObj(answer.approved) ? { csp: answer.approved as unknown as Record<string, string[]> } : {}),
    async callTool(tool, args, signal) {
      const callId = `app${++appCalls}-${Date.now().toString(36)}`;
      const done = await post("call", { server, tool, args: args as Obj, callId }, signal);
      if (!done.ok) throw new Error(errorLine(done.error));
      return done.result;
    },
    async readResource(resourceUri, signal) {
      const done = await post("read", { server, uri: resourceUri }, signal);
      if (!done.ok) throw new Error(errorLine(done.error));
      return done.result;
    },
    onActivity(a) {
      if (a.kind === "size") return;
      activity.append(el("li", {}, activityLine(a)));
      while (activity.childElementCount > MAX_ACTIVITY_LINES) activity.firstElementChild?.remove();
    },
  });
  shown.handle = handle;
}
