/**
 * MCP Apps (SEP-1865), the page's half: the host side of the apps' protocol, JSON-RPC over
 * postMessage with one app in one frame.
 *
 * The frame is `sandbox="allow-scripts allow-forms"`, never `allow-same-origin`, and its document
 * comes from the apps listener (another port): its origin is opaque ("null"), so it can reach
 * neither the explorer's DOM, nor its storage, nor its cookie, and its document's CSP (an HTTP
 * header) is the one its resource declared (S9). A message counts only when it comes from this frame's
 * window with the opaque origin; each is bounded in size and rate, and a flood closes the app.
 * The app's `tools/call` goes through the user's connection by the `callTool` the page hands in,
 * and only for a tool the server lets apps call (`_meta.ui.visibility`); `ui/open-link` opens a
 * link only once the user said yes; `ui/notifications/size-changed` sets the frame's height
 * within bounds. A change of the theme or of the frame's width is told to the app
 * (`ui/notifications/host-context-changed`, the changed fields only). A frame whose document
 * navigates away is closed: nothing more is sent to it.
 */

import {
  APP_MESSAGE_BURST,
  APP_MESSAGES_PER_SECOND,
  type AppActivity,
  type AppHandle,
  asObject,
  callableByApp,
  DEFAULT_MAX_HEIGHT,
  FLOOD_DROPS,
  INVALID_PARAMS,
  initializeResult,
  type Json,
  linkUrl,
  MAX_APP_CALLS_IN_FLIGHT,
  MAX_APP_MESSAGE_CHARS,
  METHOD_NOT_FOUND,
  MIN_HEIGHT,
  type MountAppOptions,
  REFUSED,
  Refusal,
  type RequestId,
  type RpcError,
  TEARDOWN_WAIT_MS,
  themeOf,
} from "./protocol.ts";

export type { AppActivity, AppHandle, AppTool, MountAppOptions } from "./protocol.ts";
export {
  APP_MESSAGE_BURST,
  APP_MESSAGES_PER_SECOND,
  APPS_PROTOCOL_VERSION,
  callableByApp,
  MAX_APP_CALLS_IN_FLIGHT,
  MAX_APP_MESSAGE_CHARS,
} from "./protocol.ts";

/** Mounts an app into `container` and speaks its protocol until `unmount` (or its end). */
export function mountApp(container: HTMLElement, options: MountAppOptions): AppHandle {
  const frame = document.createElement("iframe");
  // Scripts and forms; never allow-same-origin, popups or top navigation.
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.setAttribute("title", options.title ?? `App of ${options.tool.title ?? options.tool.name}`);
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.setAttribute("allow", "");
  frame.className = "mcp-app-frame";
  frame.style.width = "100%";
  frame.style.height = "150px";
  frame.style.border = "0";
  frame.style.display = "block";
  const maxHeight = options.maxHeight ?? DEFAULT_MAX_HEIGHT;
  const controller = new AbortController();
  const pending = new Map<RequestId, (message: Json) => void>();
  let nextId = 1;
  let initialized = false;
  let result: { value: unknown } | undefined =
    options.result === undefined ? undefined : { value: options.result };
  let cancelled: string | undefined;
  let resultSent = false;
  let inFlight = 0;
  let linkAsked = false;
  let closed = false;
  let tokens = APP_MESSAGE_BURST;
  let refilled = performance.now();
  let dropped = 0;
  let loads = 0;
  let requestTeardown = (): void => {};
  // The page may drop the frame with what holds it (another view, another result): the app ends.
  const leaving = new MutationObserver(() => {
    if (!frame.isConnected) close("its frame left the page");
  });
  // The host context the app was told, kept current: a change of theme or width is sent to it.
  const scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : undefined;
  const context = { theme: themeOf(scheme), width: -1 };
  const contextChanged = (params: Json): void => {
    if (initialized) notify("ui/notifications/host-context-changed", params);
  };
  const onScheme = (): void => {
    const theme = themeOf(scheme);
    if (theme === context.theme) return;
    context.theme = theme;
    contextChanged({ theme });
  };
  const resized =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(() => {
          const width = Math.round(frame.getBoundingClientRect().width);
          if (width === context.width || context.width < 0) return;
          context.width = width;
          contextChanged({ containerDimensions: { width, maxHeight } });
        })
      : undefined;

  const tell = (activity: AppActivity): void => {
    try {
      options.onActivity?.(activity);
    } catch {
      // The page's own handler cannot break the app.
    }
  };

  const post = (message: Json): void => {
    if (closed) return;
    // The frame's origin is opaque: no origin can be named, so the message goes to this one window.
    frame.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, "*");
  };
  const notify = (method: string, params: Json): void => post({ method, params });

  const sendToolData = (): void => {
    if (!initialized) return;
    if (result && !resultSent) {
      resultSent = true;
      notify("ui/notifications/tool-result", asObject(result.value) ?? {});
    } else if (cancelled !== undefined && !resultSent) {
      resultSent = true;
      notify("ui/notifications/tool-cancelled", { reason: cancelled });
    }
  };

  /** Ends the app at once: no more messages either way, the frame removed. */
  const close = (why: string): void => {
    if (closed) return;
    closed = true;
    controller.abort();
    window.removeEventListener("message", onMessage);
    leaving.disconnect();
    scheme?.removeEventListener("change", onScheme);
    resized?.disconnect();
    frame.remove();
    for (const answer of pending.values()) answer({});
    pending.clear();
    tell({ kind: "closed", why });
  };

  const withinRate = (): boolean => {
    const now = performance.now();
    tokens = Math.min(APP_MESSAGE_BURST, tokens + ((now - refilled) / 1000) * APP_MESSAGES_PER_SECOND);
    refilled = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    dropped += 1;
    if (dropped === 1)
      tell({ kind: "refused", why: "the app sends messages faster than allowed; some are dropped" });
    if (dropped >= FLOOD_DROPS) close("the app flooded the page with messages");
    return false;
  };

  const respond = (id: RequestId, outcome: { result: unknown } | { error: RpcError }): void =>
    post({ id, ...outcome });

  const handleRequest = async (method: string, params: Json): Promise<unknown> => {
    switch (method) {
      case "ui/initialize": {
        const app = asObject(params.appInfo) ?? {};
        tell({
          kind: "initialized",
          app: {
            ...(typeof app.name === "string" ? { name: app.name } : {}),
            ...(typeof app.version === "string" ? { version: app.version } : {}),
          },
        });
        context.width = Math.round(frame.getBoundingClientRect().width);
        context.theme = themeOf(scheme);
        return initializeResult(options, context, maxHeight, params);
      }
      case "ping":
        return {};
      case "tools/call":
        return callTool(params);
      case "tools/list":
        return { tools: options.tools.filter(callableByApp) };
      case "resources/read": {
        const uri = params.uri;
        if (!options.readResource)
          throw new Refusal(METHOD_NOT_FOUND, "this host does not read resources for apps");
        if (typeof uri !== "string") throw new Refusal(INVALID_PARAMS, "resources/read needs a uri");
        return options.readResource(uri, controller.signal);
      }
      case "ui/open-link":
        return openLink(params);
      case "ui/message":
        tell({ kind: "message", content: params.content });
        return {};
      case "ui/update-model-context":
        tell({ kind: "model-context", content: params.structuredContent ?? params.content });
        return {};
      case "ui/request-display-mode":
        return { mode: "inline" };
      default:
        throw new Refusal(METHOD_NOT_FOUND, `${method} is not supported by this host`);
    }
  };

  const callTool = async (params: Json): Promise<unknown> => {
    const name = params.name;
    const args = params.arguments ?? {};
    if (typeof name !== "string") throw new Refusal(INVALID_PARAMS, "tools/call needs a tool name");
    if (!asObject(args)) throw new Refusal(INVALID_PARAMS, "tools/call arguments must be an object");
    const tool = options.tools.find((t) => t.name === name);
    if (!tool) throw new Refusal(REFUSED, `the server lists no tool ${name}`);
    if (!callableByApp(tool)) throw new Refusal(REFUSED, `the server does not let apps call ${name}`);
    if (inFlight >= MAX_APP_CALLS_IN_FLIGHT)
      throw new Refusal(REFUSED, `more than ${MAX_APP_CALLS_IN_FLIGHT} calls in flight`);
    inFlight += 1;
    const started = performance.now();
    try {
      const value = await options.callTool(name, args as Json, controller.signal);
      tell({ kind: "call", name, ok: true, ms: Math.round(performance.now() - started) });
      return value;
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      tell({ kind: "call", name, ok: false, ms: Math.round(performance.now() - started), error });
      throw new Refusal(REFUSED, error);
    } finally {
      inFlight -= 1;
    }
  };

  const openLink = async (params: Json): Promise<unknown> => {
    const url = typeof params.url === "string" ? linkUrl(params.url) : undefined;
    if (!url) throw new Refusal(INVALID_PARAMS, "only http and https links open");
    // One question at a time: an app cannot queue up dialogs.
    if (linkAsked) throw new Refusal(REFUSED, "another link is waiting for the user");
    linkAsked = true;
    let yes = false;
    try {
      const ask =
        options.confirmLink ??
        ((u: string) => window.confirm(`An app asks to open this link:\n\n${u}\n\nOpen it in a new tab?`));
      yes = (await ask(url)) === true;
    } finally {
      linkAsked = false;
    }
    if (closed) throw new Refusal(REFUSED, "the app was closed");
    tell({ kind: "link", url, opened: yes });
    if (!yes) throw new Refusal(REFUSED, "Link opening denied by user");
    (options.openLink ?? ((u: string) => window.open(u, "_blank", "noopener,noreferrer")))(url);
    return {};
  };

  const handleNotification = (method: string, params: Json): void => {
    switch (method) {
      case "ui/notifications/initialized":
        if (initialized) return;
        initialized = true;
        notify("ui/notifications/tool-input", { arguments: options.input });
        sendToolData();
        return;
      case "ui/notifications/size-changed": {
        const height = params.height;
        if (typeof height === "number" && Number.isFinite(height)) {
          const px = Math.min(maxHeight, Math.max(MIN_HEIGHT, Math.ceil(height)));
          frame.style.height = `${px}px`;
          tell({ kind: "size", height: px });
        }
        return;
      }
      case "notifications/message":
        tell({
          kind: "log",
          level: typeof params.level === "string" ? params.level : "info",
          data: params.data,
        });
        return;
      case "ui/notifications/request-teardown":
        // The app asks to end: it is torn down as when the page ends it.
        requestTeardown();
        return;
      default:
        // Other notifications (initialized twice, unknown ones) change nothing.
        return;
    }
  };

  const onMessage = (event: MessageEvent): void => {
    // Only this frame's window, and only with the opaque origin its sandbox gives it.
    if (closed || event.source !== frame.contentWindow || event.origin !== "null") return;
    if (!withinRate()) return;
    const data: unknown = event.data;
    const message = asObject(data);
    if (message?.jsonrpc !== "2.0") return;
    let size: number;
    try {
      size = JSON.stringify(message).length;
    } catch {
      return;
    }
    const id = message.id;
    const hasId = typeof id === "string" || typeof id === "number";
    if (size > MAX_APP_MESSAGE_CHARS) {
      tell({ kind: "refused", why: `a message of ${size} characters, over ${MAX_APP_MESSAGE_CHARS}` });
      if (hasId && typeof message.method === "string")
        respond(id, { error: { code: REFUSED, message: "message too large" } });
      return;
    }
    if (typeof message.method === "string") {
      const params = asObject(message.params) ?? {};
      if (!hasId) {
        handleNotification(message.method, params);
        return;
      }
      handleRequest(message.method, params).then(
        (value) => respond(id, { result: value ?? {} }),
        (e: unknown) =>
          respond(id, {
            error:
              e instanceof Refusal
                ? { code: e.code, message: e.message }
                : { code: -32603, message: String(e) },
          }),
      );
      return;
    }
    // An answer to one of ours (the teardown request).
    if (hasId) {
      const answer = pending.get(id);
      pending.delete(id);
      answer?.(message);
    }
  };

  window.addEventListener("message", onMessage);
  frame.addEventListener("load", () => {
    loads += 1;
    // The first load is the app's document; another is a navigation to one the server never sent.
    if (loads > 1) close("the app's frame navigated away");
  });
  frame.src = options.url;
  container.append(frame);
  leaving.observe(document.body, { childList: true, subtree: true });
  scheme?.addEventListener("change", onScheme);
  resized?.observe(frame);

  let unmounting: Promise<void> | undefined;
  /** Asks the app to end (it gets a moment to answer), then closes it. */
  const unmount = (reason: string): Promise<void> => {
    unmounting ??= (async () => {
      if (closed) return;
      if (initialized && frame.isConnected) {
        const id = `teardown-${nextId++}`;
        const answered = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, TEARDOWN_WAIT_MS);
          pending.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        post({ id, method: "ui/resource-teardown", params: { reason } });
        await answered;
      }
      close(reason);
    })();
    return unmounting;
  };
  requestTeardown = () => void unmount("the app asked to end");
  return {
    frame,
    sendResult(value: unknown): void {
      if (result) return;
      result = { value };
      sendToolData();
    },
    sendCancelled(reason = "cancelled by the user"): void {
      if (result || cancelled !== undefined) return;
      cancelled = reason;
      sendToolData();
    },
    unmount: (reason = "closed by the user") => unmount(reason),
  };
}
