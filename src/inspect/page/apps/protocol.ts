/**
 * MCP Apps (SEP-1865): the protocol's shapes and bounds on the page's side, and the answers the
 * host gives that need nothing of a mounted frame (initialize, which tools an app may call, which
 * links it may open). host.ts mounts one app and speaks the protocol with it.
 */
/** The protocol version this host speaks. */
export const APPS_PROTOCOL_VERSION = "2026-01-26";
/** The largest message taken from an app, as JSON text: the explorer's own request bound. */
export const MAX_APP_MESSAGE_CHARS = 1024 * 1024;
/** Messages an app may send in a burst, and per second after it. */
export const APP_MESSAGE_BURST = 200;
export const APP_MESSAGES_PER_SECOND = 100;
/** Messages dropped for rate before the app is closed as a flood. */
export const FLOOD_DROPS = 1000;
/** The app's own tool calls in flight at once. */
export const MAX_APP_CALLS_IN_FLIGHT = 8;
/** How long teardown waits for the app's answer before removing the frame. */
export const TEARDOWN_WAIT_MS = 1000;
/** The frame's height bounds, in CSS pixels. */
export const MIN_HEIGHT = 40;
export const DEFAULT_MAX_HEIGHT = 2000;

/** A tool as the page lists it (the fields the apps' protocol uses). */
export interface AppTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  _meta?: Record<string, unknown>;
}

/** What an app did that the page may show. */
export type AppActivity =
  | { kind: "initialized"; app: { name?: string; version?: string } }
  | { kind: "call"; name: string; ok: boolean; ms: number; error?: string }
  | { kind: "log"; level: string; data: unknown }
  | { kind: "message"; content: unknown }
  | { kind: "model-context"; content: unknown }
  | { kind: "link"; url: string; opened: boolean }
  | { kind: "size"; height: number }
  | { kind: "refused"; why: string }
  | { kind: "closed"; why: string };

export interface MountAppOptions {
  /** The frame document's URL, from the apps listener. */
  url: string;
  /** The tool whose call this app shows. */
  tool: AppTool;
  /** The arguments of that call. */
  input: Record<string, unknown>;
  /** Its result, when known at mount; else send it later with `sendResult`. */
  result?: unknown;
  /** The server's tools: the app may call those its visibility lets apps call. */
  tools: readonly AppTool[];
  /** Calls a tool through the user's connection; resolves with the `tools/call` result. */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /** Reads a resource through the user's connection; without it the app's `resources/read` is refused. */
  readResource?(uri: string, signal: AbortSignal): Promise<unknown>;
  /** Asks the user whether to open a link the app asked for (default: `window.confirm`). */
  confirmLink?(url: string): boolean | Promise<boolean>;
  /** Opens a link the user agreed to (default: a new tab, no opener, no referrer). */
  openLink?(url: string): void;
  /** Told what the app does (logs, messages, calls, refusals, its end). Whatever it throws is ignored. */
  onActivity?(activity: AppActivity): void;
  /** The frame's accessible name (default: the tool's title or name). */
  title?: string;
  /** The tallest the frame grows, in CSS pixels. */
  maxHeight?: number;
  /** The sources the app's CSP allows (what the explorer approved of its declaration), told to the app. */
  csp?: Record<string, string[]>;
  /** The host's name and version, told to the app. */
  hostInfo?: { name: string; version: string };
}

/** A mounted app. */
export interface AppHandle {
  readonly frame: HTMLIFrameElement;
  /** Sends the call's result (`ui/notifications/tool-result`), once the app is initialized. */
  sendResult(result: unknown): void;
  /** Tells the app the call was cancelled (`ui/notifications/tool-cancelled`). */
  sendCancelled(reason?: string): void;
  /** Asks the app to end (`ui/resource-teardown`), then removes the frame. Idempotent. */
  unmount(reason?: string): Promise<void>;
}

export type Json = Record<string, unknown>;
export type RequestId = string | number;

export interface RpcError {
  code: number;
  message: string;
}

export class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const REFUSED = -32000;

export const themeOf = (scheme: MediaQueryList | undefined): "dark" | "light" =>
  scheme?.matches ? "dark" : "light";

export function initializeResult(
  options: MountAppOptions,
  context: { theme: string; width: number },
  maxHeight: number,
  params: Json,
): Json {
  const asked = params.protocolVersion;
  return {
    protocolVersion: asked === APPS_PROTOCOL_VERSION ? asked : APPS_PROTOCOL_VERSION,
    hostInfo: options.hostInfo ?? { name: "tether inspect", version: "1" },
    hostCapabilities: {
      openLinks: {},
      serverTools: {},
      ...(options.readResource ? { serverResources: {} } : {}),
      logging: {},
      message: { text: {} },
      updateModelContext: { text: {}, structuredContent: {} },
      sandbox: { permissions: {}, ...(options.csp ? { csp: options.csp } : {}) },
    },
    hostContext: {
      toolInfo: { tool: options.tool },
      theme: context.theme,
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      containerDimensions: { width: context.width, maxHeight },
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: "tether-inspect",
      platform: "web",
      deviceCapabilities: {
        hover: typeof matchMedia === "function" && matchMedia("(hover: hover)").matches,
        touch: false,
      },
    },
  };
}

/** Whether the app may call this tool: its `_meta.ui.visibility` (default both) includes "app". */
export function callableByApp(tool: AppTool): boolean {
  const ui = asObject(tool._meta?.ui);
  const visibility = ui?.visibility;
  return !Array.isArray(visibility) || visibility.includes("app");
}

/** An http(s) URL as the browser reads it, or undefined. */
export function linkUrl(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export function asObject(value: unknown): Json | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}
