import type { Client } from "../client/api.ts";
import type { ListenKind } from "./wire.ts";

/**
 * A command's notification stream on a session (`watch`, the shell): the client's own
 * subscription for that kind, each payload handed to `send`. Returns the unsubscribe.
 */
export function subscribe(
  c: Client,
  kind: ListenKind,
  method: string,
  send: (p: unknown) => void,
): () => void {
  switch (kind) {
    case "notification":
      return c.onNotification(method, (n) => send(n));
    case "log":
      return c.onLogMessage((m) => send(m));
    case "list_changed_tools":
      return c.onListChanged("tools", () => send({}));
    case "list_changed_resources":
      return c.onListChanged("resources", () => send({}));
    case "list_changed_prompts":
      return c.onListChanged("prompts", () => send({}));
    case "resource_updated":
      return c.onResourceUpdated((u) => send(u));
    case "task_status":
      return c.onTaskStatus((t) => send(t));
  }
}
