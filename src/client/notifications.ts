import { configError } from "../errors/failures.ts";
import type { JsonRpcNotification } from "../jsonrpc/messages.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { ListKind } from "./api.ts";
import { type NotificationHandler, NotificationHub } from "./notification-hub.ts";
import type { LoggingMessage, ResourceUpdate, Task } from "./results.ts";
import { loggingMessage, parseTask } from "./shapes.ts";
import type { Subscriptions } from "./subscriptions.ts";

/** The notification methods of list changes, and the list each one names. */
const LIST_CHANGED = /^notifications\/(tools|resources|prompts)\/list_changed$/;

/**
 * Server notifications on their way to the application: every one the session admits passes
 * here once, first to the client's own caches (`onToolsChanged`), then to the handlers. The typed
 * subscriptions (log messages, list changes, resource updates, task status) are handlers over
 * the same hub. In 2026-07-28, where a server announces list changes only on a listen stream that
 * asked for them, a handler for a list change asks for it, and a notification from a stream the
 * client already replaced is dropped.
 */
export class ClientNotifications {
  readonly #hub = new NotificationHub();
  readonly #subscriptions: Subscriptions | undefined;
  readonly #onToolsChanged: () => void;
  readonly #off: () => void;

  constructor(session: Session, subscriptions: Subscriptions | undefined, onToolsChanged: () => void) {
    this.#subscriptions = subscriptions;
    this.#onToolsChanged = onToolsChanged;
    this.#off = session.notifications.add((n) => this.#received(n));
  }

  on(method: string, handler: NotificationHandler): () => void {
    if (typeof method !== "string" || method === "")
      throw configError("invalid_option", "method must be a non-empty string");
    if (typeof handler !== "function") throw configError("invalid_option", "handler must be a function");
    const off = this.#hub.on(method, handler);
    const kind = LIST_CHANGED.exec(method)?.[1] as ListKind | undefined;
    if (kind) this.#subscriptions?.wantList(kind);
    return off;
  }

  onLogMessage(handler: (message: LoggingMessage) => void | Promise<void>): () => void {
    return this.on("notifications/message", (n) => {
      const message = loggingMessage(n.params);
      return message ? handler(message) : undefined;
    });
  }

  onListChanged(kind: ListKind, handler: () => void | Promise<void>): () => void {
    if (kind !== "tools" && kind !== "resources" && kind !== "prompts")
      throw configError("invalid_option", "kind must be tools, resources or prompts");
    return this.on(`notifications/${kind}/list_changed`, () => handler());
  }

  onResourceUpdated(handler: (update: ResourceUpdate) => void | Promise<void>): () => void {
    return this.on("notifications/resources/updated", (n) =>
      typeof n.params.uri === "string" ? handler({ uri: n.params.uri }) : undefined,
    );
  }

  onTaskStatus(handler: (task: Task) => void | Promise<void>): () => void {
    const deliver: NotificationHandler = (n) => {
      const task = parseTask(n.params);
      return task ? handler(task) : undefined;
    };
    // 2025-11-25 says notifications/tasks/status; the 2026-07-28 extension, notifications/tasks.
    const offs = [this.on("notifications/tasks/status", deliver), this.on("notifications/tasks", deliver)];
    return () => {
      for (const off of offs) off();
    };
  }

  /** No handler runs after this. */
  clear(): void {
    this.#off();
    this.#hub.clear();
  }

  #received(n: JsonRpcNotification): void {
    if (this.#subscriptions && !this.#subscriptions.admits(n)) return;
    if (n.method === "notifications/tools/list_changed") this.#onToolsChanged();
    this.#hub.dispatch(n);
  }
}
