/**
 * `tether watch`: the server's notifications as they arrive (log messages at the asked level,
 * list changes, updates of subscribed resources, progress), one line each or NDJSON, until the
 * caller's signal (Ctrl-C) or the duration ends it.
 */
import type { Client } from "../client/api.ts";
import type { LoggingLevel } from "../client/results.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { JsonValue } from "../jsonrpc/messages.ts";
import { progressRecord } from "./progress-event.ts";

export interface WatchOptions {
  logLevel?: LoggingLevel;
  subscribe: readonly string[];
  /** Ends the watch after this long; without it only the signal does. */
  durationMs?: number;
  json: boolean;
  signal?: AbortSignal;
  /** Writes one line at once (never held back until the end). */
  write: (line: string) => void;
  redactor: Redactor;
}

/** Watches until the signal or the duration; every line is redacted and sanitized. */
export async function watch(client: Client, o: WatchOptions): Promise<void> {
  const emit = (record: Record<string, JsonValue>, human: string) =>
    o.write(
      o.json
        ? `${terminalJson(o.redactor.redactDocument(record))}\n`
        : `${terminalLine(o.redactor.messageText(human))}\n`,
    );
  const stops = [
    client.onLogMessage((m) => {
      const text = typeof m.data === "string" ? m.data : JSON.stringify(m.data);
      emit(
        { type: "log", level: m.level, ...(m.logger ? { logger: m.logger } : {}), data: m.data },
        `log ${m.level}${m.logger ? ` [${m.logger}]` : ""}: ${text}`,
      );
    }),
    ...(["tools", "resources", "prompts"] as const).map((list) =>
      client.onListChanged(list, () => emit({ type: "list_changed", list }, `${list} changed`)),
    ),
    client.onResourceUpdated((u) => emit({ type: "resource_updated", uri: u.uri }, `updated ${u.uri}`)),
    // Progress the server reports on its own (for work it started, or a task): no call of ours
    // is waiting for it, so it is shown here as it comes.
    client.onNotification("notifications/progress", ({ params: p }) => {
      const token = p.progressToken;
      if (typeof p.progress !== "number" || (typeof token !== "string" && typeof token !== "number")) return;
      const total = typeof p.total === "number" ? p.total : undefined;
      const message = typeof p.message === "string" ? p.message : undefined;
      emit(
        progressRecord({ progressToken: token, progress: p.progress, total, message }),
        `progress ${token}: ${p.progress}${total !== undefined ? `/${total}` : ""}${message ? ` ${message}` : ""}`,
      );
    }),
  ];
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    if (o.logLevel) await client.setLoggingLevel(o.logLevel, { signal: o.signal });
    for (const uri of o.subscribe) await client.subscribeResource(uri, { signal: o.signal });
    await new Promise<void>((resolve) => {
      if (o.signal?.aborted) return resolve();
      onAbort = resolve;
      o.signal?.addEventListener("abort", onAbort, { once: true });
      if (o.durationMs !== undefined) timer = setTimeout(resolve, o.durationMs);
    });
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) o.signal?.removeEventListener("abort", onAbort);
    for (const stop of stops) stop();
  }
}
