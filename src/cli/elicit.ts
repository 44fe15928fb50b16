/**
 * Server elicitation: on a terminal the server's message is shown, each field of its requested
 * schema is asked for in turn, and each answer converted to the declared type. Only a person at a
 * terminal is asked; elsewhere (piped, or with --json) the capability is still declared and every
 * request is answered `decline` at once, so a server that asks learns that no one will answer,
 * rather than being refused as though it spoke out of turn or waiting for a reply that cannot come.
 *
 * URL mode (SEP-1036): the URL is shown whole (sanitized) with its host, and opened in the
 * browser only when the person agrees; the command then waits, within the call budget, for the
 * server's `notifications/elicitation/complete` for that elicitation (UrlElicitations).
 */
import { spawn } from "node:child_process";
import { terminalBlock, terminalLine } from "../errors/terminal-text.ts";
import type { UrlElicitationRequired } from "../errors/url-elicitation.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { convert, typeLabel } from "./schema-args.ts";

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

type Handler = (params: JsonObject, context: { signal: AbortSignal }) => Promise<JsonObject>;

/** The URL elicitations a handler accepted, by the handler: the command waits for them (see command.ts). */
const waitsOf = new WeakMap<object, UrlElicitations>();

/** The accepted URL elicitations of a handler made here, if it asks on a terminal. */
export function urlElicitationsOf(handler: unknown): UrlElicitations | undefined {
  return typeof handler === "function" ? waitsOf.get(handler) : undefined;
}

/**
 * The CLI's elicitation handler: asked on the terminal when `ask` is given, else declined. `env`
 * names the browser opener (TETHER_BROWSER, see openUrl).
 */
export function cliElicitation(
  ask: ((prompt: string, signal: AbortSignal) => Promise<string>) | undefined,
  write: (text: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Handler {
  if (!ask) return async () => ({ action: "decline" });
  const waits = new UrlElicitations(write);
  const handler = terminalElicitation(ask, write, (url) => openUrl(url, env), waits);
  waitsOf.set(handler, waits);
  return handler;
}

/**
 * Opens a URL in the browser: the command named by TETHER_BROWSER when set (tests point it at a
 * script), else `open` (macOS), `explorer` (Windows) or `xdg-open`. The URL is one argument,
 * never read by a shell. Resolves false when the opener could not be started.
 */
export function openUrl(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const opener =
    env.TETHER_BROWSER ||
    (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open");
  return new Promise((resolve) => {
    try {
      const child = spawn(opener, [url], { stdio: "ignore", detached: true });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

/**
 * URL elicitations a person agreed to open, until the server reports each complete
 * (`notifications/elicitation/complete` with its `elicitationId`; unknown and repeated ids are
 * ignored, as the spec asks).
 */
export class UrlElicitations {
  readonly #write: (text: string) => void;
  /** Each accepted elicitation's id, with when it was accepted (performance.now()). */
  readonly #pending = new Map<string, number>();
  #wake: (() => void) | undefined;

  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  accepted(id: string): void {
    this.#pending.set(id, performance.now());
  }

  /** The server's completion notification for `id`. */
  complete(id: unknown): void {
    if (typeof id !== "string" || !this.#pending.delete(id)) return;
    this.#write("The server reports the step in the browser complete.\n");
    if (this.#pending.size === 0) this.#wake?.();
  }

  get waiting(): number {
    return this.#pending.size;
  }

  /** Whether `id` was accepted and is not reported complete yet. */
  pending(id: string): boolean {
    return this.#pending.has(id);
  }

  /** Stops waiting for `id` (its wait is over, reported or not). */
  forget(id: string): void {
    this.#pending.delete(id);
  }

  /**
   * Waits until every accepted elicitation is reported complete, each for at most `budgetMs`
   * from when it was accepted, or until `signal` aborts (Ctrl-C). Says what it waits for, and
   * when it stops waiting without the server's word.
   */
  async settle(budgetMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#pending.size === 0) return;
    this.#write("Waiting for the server to report the step in the browser complete…\n");
    const latest = Math.max(...this.#pending.values());
    const left = Math.max(0, latest + budgetMs - performance.now());
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, left);
      signal?.addEventListener("abort", done, { once: true });
      this.#wake = done;
      if (signal?.aborted) done();
    });
    if (this.#pending.size > 0)
      this.#write(`The server did not report it complete within the ${budgetMs} ms call budget.\n`);
  }
}

/** A URL the person may be sent to: http or https only, parsed; undefined otherwise. */
function browsable(raw: unknown): URL | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const url = new URL(raw);
    return url.protocol === "https:" || url.protocol === "http:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A URL elicitation on the terminal: the message, the whole URL (sanitized) and its host (a
 * Punycode host is pointed out), then one question. Opened only on `y`; never pre-fetched.
 */
async function urlElicitation(
  params: JsonObject,
  context: { signal: AbortSignal },
  ask: (prompt: string, signal: AbortSignal) => Promise<string>,
  write: (text: string) => void,
  open: (url: string) => Promise<boolean>,
  waits: UrlElicitations | undefined,
): Promise<JsonObject> {
  const url = browsable(params.url);
  const id = typeof params.elicitationId === "string" ? params.elicitationId : undefined;
  if (!url || id === undefined) {
    write("The server sent no http(s) URL to open; declined.\n");
    return { action: "decline" };
  }
  const punycode = url.hostname.split(".").some((label) => label.startsWith("xn--"));
  write(`URL:  ${terminalLine(url.href)}\n`);
  write(`host: ${terminalLine(url.host)}${punycode ? " (Punycode: it may imitate another name)" : ""}\n`);
  const answer = (await ask("Open it in your browser? [y/N] ", context.signal)).trim().toLowerCase();
  if (answer !== "y" && answer !== "yes") return { action: "decline" };
  if (!(await open(url.href))) write("The browser could not be started: open the URL above yourself.\n");
  waits?.accepted(id);
  return { action: "accept" };
}

/**
 * The elicitation handler: asks with `ask` (one line per field), writes the message with `write`;
 * a URL elicitation is opened with `open` when the person agrees (declined without one).
 */
export function terminalElicitation(
  ask: (prompt: string, signal: AbortSignal) => Promise<string>,
  write: (text: string) => void,
  open?: (url: string) => Promise<boolean>,
  waits?: UrlElicitations,
): Handler {
  return async (params: JsonObject, context: { signal: AbortSignal }): Promise<JsonObject> => {
    write(`\n${terminalBlock(String(params.message ?? "The server asks for input."))}\n`);
    if (params.mode === "url")
      return open ? urlElicitation(params, context, ask, write, open, waits) : { action: "decline" };
    const schema = isObject(params.requestedSchema) ? params.requestedSchema : {};
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    write("(empty skips an optional field; !decline or !cancel refuses)\n");
    const content: JsonObject = {};
    for (const [name, raw] of Object.entries(properties)) {
      const property = isObject(raw) ? raw : {};
      const title = typeof property.title === "string" ? property.title : name;
      const label = `${terminalLine(title)} (${terminalLine(typeLabel(property))}${required.has(name) ? "" : ", optional"})`;
      for (;;) {
        const answer = (await ask(`${label}: `, context.signal)).trim();
        if (answer === "!decline") return { action: "decline" };
        if (answer === "!cancel") return { action: "cancel" };
        if (answer === "" && !required.has(name)) break;
        const fitted = answer === "" ? undefined : convert(answer, property);
        if (fitted !== undefined) {
          content[name] = fitted;
          break;
        }
        write(
          answer === ""
            ? "an answer is required\n"
            : `that does not fit ${terminalLine(typeLabel(property))}\n`,
        );
      }
    }
    return { action: "accept", content };
  };
}

/**
 * A request the server refused with -32042 (URLElicitationRequiredError), at a terminal: each URL
 * it requires is put to the person exactly as a URL-mode elicitation request is (its message, the
 * whole URL, its host, one question, opened only on yes), then the server's completions are waited
 * for within `budgetMs`. True when every one was opened and reported complete: the person's
 * consent to send the request again, once. False with no terminal handler (off a terminal, or
 * --json), when one is declined, or when a completion did not come in time.
 */
export async function completeRequiredUrls(
  handler: unknown,
  required: readonly UrlElicitationRequired[],
  budgetMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const waits = urlElicitationsOf(handler);
  if (!waits || typeof handler !== "function") return false;
  const ask = handler as Handler;
  const context = { signal: signal ?? new AbortController().signal };
  const ids = required.map((r) => r.elicitationId);
  try {
    for (const r of required) {
      const params = { mode: "url", elicitationId: r.elicitationId, url: r.url, message: r.message };
      if ((await ask(params, context)).action !== "accept") return false;
    }
    await waits.settle(budgetMs, signal);
    return !signal?.aborted && ids.every((id) => !waits.pending(id));
  } finally {
    // Their wait is over here: the command's own wait after the result does not repeat it.
    for (const id of ids) waits.forget(id);
  }
}
