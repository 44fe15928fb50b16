/**
 * One server as the explorer holds it: its connection (made on demand, remade on reconnect), the
 * establishment timeline from its lifecycle events, its calls in flight, the questions it asked
 * that a page has yet to answer, and the roots the user lists. Everything it tells the pages is
 * redacted first, with the connection's redactor (S4).
 */
import type { Client } from "../client/api.ts";
import type { LoggingLevel, Tool } from "../client/results.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import type { ClientHandlers, HandlerContext } from "../options/handlers.ts";
import type { Feed } from "./feed.ts";
import type { WireListener } from "./wire-tap.ts";

/** A server the sidebar lists. */
export interface ServerChoice {
  id: string;
  name: string;
  /** Where it came from: `command line`, a config file's path, `session`. */
  source: string;
  transport: string;
}

/** What the explorer's connection adds to the command's own options. */
export interface ConnectExtras {
  handlers: ClientHandlers;
  onEvent: (event: LifecycleEvent) => void;
  signal: AbortSignal;
  /** Hears every line to and from a stdio server (wire-tap.ts), for the message history. */
  wire: WireListener;
}

/** What the command that starts the explorer provides: the servers, and how to reach one. */
export interface ExplorerHost {
  servers(): ServerChoice[];
  connect(id: string, extras: ConnectExtras): Promise<Client>;
  /** Refuses arguments the tool's schema does not admit, with the CLI's messages (throws). */
  checkArgs(tool: Tool, args: JsonObject): void;
  /** The error record (code, stage, phase, message, hint), redacted with what the command knows. */
  errorRecord(error: unknown): Record<string, unknown>;
  /** Redaction before a connection exists (the command's redactor). */
  redact<T>(value: T): T;
}

/** Events of one connect kept for its timeline (a recovery's attempts included). */
const MAX_TIMELINE_EVENTS = 400;
/** Questions of a server a page has yet to answer. */
const MAX_OPEN_ASKS = 16;
/** A history entry keeps at most this much of the message's JSON. */
const BODY_PREVIEW_CHARS = 16 * 1024;
/** Request ids remembered to name the method a response answers. */
const MAX_OPEN_IDS = 1000;

type Ask = { resolve: (answer: JsonObject) => void; reject: (error: Error) => void };

export class Connection {
  readonly choice: ServerChoice;
  state: "idle" | "connecting" | "open" | "failed" | "closed" = "idle";
  client: Client | undefined;
  timeline: LifecycleEvent[] = [];
  error: Record<string, unknown> | undefined;
  roots: { uri: string; name?: string }[] = [];
  readonly #host: ExplorerHost;
  readonly #feed: Feed;
  readonly #stop: AbortSignal;
  #connecting: Promise<void> | undefined;
  #controller: AbortController | undefined;
  readonly #calls = new Map<string, AbortController>();
  readonly #asks = new Map<string, Ask>();
  #askSeq = 0;
  #unsubscribe: (() => void)[] = [];
  /** Whether the history comes off the wire (stdio); else it is made of the explorer's own operations. */
  #onWire = false;
  /** `in:ID` / `out:ID` of requests in flight, to the method each asked. */
  readonly #ids = new Map<string, string>();

  constructor(choice: ServerChoice, host: ExplorerHost, feed: Feed, stop: AbortSignal) {
    this.choice = choice;
    this.#host = host;
    this.#feed = feed;
    this.#stop = stop;
  }

  /** Redacts with the connection's redactor once there is one, else with the command's. */
  redact<T>(value: T): T {
    return this.client ? this.client.redact(value) : this.#host.redact(value);
  }

  /** What the sidebar and overview show. */
  summary(): JsonObject {
    const c = this.client;
    return this.redact({
      id: this.choice.id,
      name: this.choice.name,
      source: this.choice.source,
      transport: c?.transportMode ?? this.choice.transport,
      state: this.state,
      era: c?.era ?? null,
      protocolVersion: c?.protocolVersion ?? null,
      serverInfo: (c?.serverInfo as JsonObject | undefined) ?? null,
      instructions: c?.instructions ?? null,
      capabilities: c?.serverCapabilities ?? null,
      extensions: (c?.serverExtensions as JsonObject | undefined) ?? null,
      attempts: c?.attempts ?? null,
      timeline: this.timeline as unknown as JsonValue,
      error: (this.error as JsonObject | undefined) ?? null,
      roots: this.roots,
    });
  }

  #changed(): void {
    this.#feed.push({ kind: "server", server: this.choice.id, summary: this.summary() });
  }

  /** Connects unless connected; a second caller waits for the same attempt. */
  connect(): Promise<void> {
    if (this.state === "open") return Promise.resolve();
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    const controller = new AbortController();
    const onStop = () => controller.abort(this.#stop.reason);
    this.#stop.addEventListener("abort", onStop, { once: true });
    this.#controller = controller;
    this.state = "connecting";
    this.timeline = [];
    this.error = undefined;
    this.#changed();
    try {
      const client = await this.#host.connect(this.choice.id, {
        handlers: this.#handlers(),
        onEvent: (e) => {
          if (this.timeline.length < MAX_TIMELINE_EVENTS) this.timeline.push(e);
          this.#feed.push({ kind: "event", server: this.choice.id, event: e as unknown as JsonObject });
        },
        signal: controller.signal,
        wire: (dir, text, bytes) => this.#wire(dir, text, bytes),
      });
      if (controller.signal.aborted) {
        await client.close();
        throw controller.signal.reason;
      }
      this.client = client;
      this.state = "open";
      this.#listen(client);
    } catch (error) {
      this.state = "failed";
      this.error = this.#host.errorRecord(error);
    } finally {
      this.#stop.removeEventListener("abort", onStop);
    }
    this.#changed();
  }

  #listen(client: Client): void {
    const id = this.choice.id;
    this.#unsubscribe = [
      client.onNotification("*", (n) => {
        const params = client.redact(n.params);
        this.message("in", n.method, params);
        if (n.method === "notifications/message")
          this.#feed.push({
            kind: "log",
            server: id,
            level: params.level ?? "info",
            logger: params.logger ?? null,
            data: params.data ?? null,
          });
        else if (n.method === "notifications/resources/updated")
          this.#feed.push({ kind: "updated", server: id, uri: params.uri ?? null });
        else if (n.method.endsWith("/list_changed"))
          this.#feed.push({ kind: "list_changed", server: id, list: n.method.split("/")[1] ?? "" });
      }),
    ];
  }

  /**
   * Adds one entry to the message history, made of the explorer's own operations: direction,
   * method, size, and the start of its body. Once the history comes off the wire, it is that.
   */
  message(dir: "in" | "out", method: string, body: unknown): void {
    if (this.#onWire) return;
    this.#entry(dir, method, JSON.stringify(body ?? null));
  }

  #entry(dir: "in" | "out", method: string, json: string, bytes = Buffer.byteLength(json)): void {
    this.#feed.push({
      kind: "message",
      server: this.choice.id,
      dir,
      method,
      bytes,
      body: json.length > BODY_PREVIEW_CHARS ? `${json.slice(0, BODY_PREVIEW_CHARS)}…` : json,
    });
  }

  /** One JSON-RPC message as it crossed the wire, named by its method (a response by its request's). */
  #wire(dir: "in" | "out", text: string, bytes: number): void {
    this.#onWire = true;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      // Cut at KEEP characters (or not JSON at all): its method, if it starts with one.
      const method = /"method"\s*:\s*"([^"]{1,100})"/.exec(text)?.[1] ?? "(not shown: too long, or not JSON)";
      this.#entry(dir, method, JSON.stringify(this.redact(text.slice(0, BODY_PREVIEW_CHARS))), bytes);
      return;
    }
    const m = (typeof doc === "object" && doc !== null ? doc : {}) as Record<string, unknown>;
    const id = typeof m.id === "string" || typeof m.id === "number" ? String(m.id) : undefined;
    let method: string;
    if (typeof m.method === "string") {
      method = m.method;
      if (id !== undefined) {
        this.#ids.set(`${dir}:${id}`, method);
        if (this.#ids.size > MAX_OPEN_IDS) this.#ids.delete(this.#ids.keys().next().value!);
      }
    } else {
      const key = `${dir === "in" ? "out" : "in"}:${id}`;
      method = `${this.#ids.get(key) ?? "?"} (${"error" in m ? "error" : "result"})`;
      this.#ids.delete(key);
    }
    this.#entry(dir, method, JSON.stringify(this.redact(doc)), bytes);
  }

  /** The server's questions become dialogs on the page; the answer comes back through `answer`. */
  #handlers(): ClientHandlers {
    return {
      elicitation: (params, ctx) => this.#ask("elicitation", params, ctx),
      sampling: (params, ctx) => this.#ask("sampling", params, ctx),
      roots: () => {
        this.message("in", "roots/list", {});
        const answer = { roots: this.roots };
        this.message("out", "roots/list (answer)", answer);
        return answer;
      },
    };
  }

  #ask(kind: "elicitation" | "sampling", params: JsonObject, ctx: HandlerContext): Promise<JsonObject> {
    const method = kind === "elicitation" ? "elicitation/create" : "sampling/createMessage";
    const shown = this.redact(params);
    this.message("in", method, shown);
    if (this.#asks.size >= MAX_OPEN_ASKS)
      return Promise.reject(new Error("too many questions are waiting for an answer"));
    const askId = `q${++this.#askSeq}`;
    return new Promise<JsonObject>((resolve, reject) => {
      const done = () => {
        this.#asks.delete(askId);
        ctx.signal.removeEventListener("abort", onAbort);
        this.#feed.push({ kind: "ask_done", server: this.choice.id, ask: askId });
      };
      const onAbort = () => {
        done();
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("no longer wanted"));
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      this.#asks.set(askId, {
        resolve: (answer) => {
          done();
          this.message("out", `${method} (answer)`, this.redact(answer));
          resolve(answer);
        },
        reject: (error) => {
          done();
          this.message("out", `${method} (refused)`, { message: error.message });
          reject(error);
        },
      });
      this.#feed.push({ kind: "ask", server: this.choice.id, ask: askId, type: kind, params: shown });
    });
  }

  /** The page's answer to a question; false when the question is gone. */
  answer(askId: string, answer: JsonObject | undefined): boolean {
    const ask = this.#asks.get(askId);
    if (!ask) return false;
    if (answer === undefined) ask.reject(new Error("the user declined"));
    else ask.resolve(answer);
    return true;
  }

  setRoots(roots: { uri: string; name?: string }[]): void {
    this.roots = roots;
    if (this.client && this.state === "open")
      void this.client.notify("notifications/roots/list_changed").catch(() => undefined);
    this.#changed();
  }

  /** Refuses arguments the tool's schema does not admit, with the CLI's messages. */
  checkArgs(tool: Tool, args: JsonObject): void {
    this.#host.checkArgs(tool, args);
  }

  /** The open client, or a connection first. */
  async ready(): Promise<Client> {
    await this.connect();
    if (!this.client || this.state !== "open") throw new NotConnected(this.error);
    return this.client;
  }

  /** A signal for one call the page may cancel by `callId`; the returned function forgets it. */
  track(callId: string, signal: AbortSignal): { signal: AbortSignal; end: () => void } {
    const controller = new AbortController();
    const abort = () => controller.abort(new Error("cancelled from the explorer"));
    signal.addEventListener("abort", abort, { once: true });
    this.#controller?.signal.addEventListener("abort", abort, { once: true });
    this.#calls.get(callId)?.abort();
    this.#calls.set(callId, controller);
    return {
      signal: controller.signal,
      end: () => {
        signal.removeEventListener("abort", abort);
        this.#controller?.signal.removeEventListener("abort", abort);
        if (this.#calls.get(callId) === controller) this.#calls.delete(callId);
      },
    };
  }

  cancel(callId: string): boolean {
    const call = this.#calls.get(callId);
    call?.abort(new Error("cancelled from the explorer"));
    return call !== undefined;
  }

  progress(callId: string, progress: JsonObject): void {
    this.#feed.push({
      kind: "progress",
      server: this.choice.id,
      call: callId,
      progress: this.redact(progress),
    });
  }

  async setLevel(level: LoggingLevel, signal: AbortSignal): Promise<void> {
    const client = await this.ready();
    this.message("out", "logging/setLevel", { level });
    await client.setLoggingLevel(level, { signal });
  }

  /** Ends every call and question, and closes the connection. Never rejects. */
  async disconnect(): Promise<void> {
    this.#controller?.abort(new Error("disconnected"));
    for (const call of this.#calls.values()) call.abort(new Error("disconnected"));
    for (const ask of [...this.#asks.values()]) ask.reject(new Error("disconnected"));
    for (const stop of this.#unsubscribe) stop();
    this.#unsubscribe = [];
    await this.#connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (client) {
      await client.close();
      this.state = "closed";
      this.#changed();
    }
  }
}

/** An operation asked of a server whose connect failed: the page shows the connect's error. */
export class NotConnected extends Error {
  readonly record: Record<string, unknown> | undefined;
  constructor(record: Record<string, unknown> | undefined) {
    super("not connected");
    this.record = record;
  }
}
