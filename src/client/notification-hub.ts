import type { JsonRpcNotification } from "../jsonrpc/messages.ts";
import type { ServerNotification } from "./results.ts";

/** Receives server notifications. Whatever it returns or throws is its own. */
export type NotificationHandler = (notification: ServerNotification) => void | Promise<void>;

/** Subscribes to every method. */
export const ANY_METHOD = "*";

/**
 * The application's notification handlers, by method. Delivery is detached from the receive
 * path: the session hands a notification over and returns at once; each notification's handlers
 * run later, in their own turn of the event loop, in arrival order. A handler that throws,
 * rejects or never settles is not awaited and cannot delay the session, a call, or the next
 * handler. How many notifications arrive at all is bounded upstream (the session's inbound gate).
 */
export class NotificationHub {
  readonly #byMethod = new Map<string, Set<NotificationHandler>>();
  readonly #schedule: (run: () => void) => void;

  /** `schedule` defers a delivery (default: `setImmediate`); tests may pass their own. */
  constructor(schedule: (run: () => void) => void = (run) => void setImmediate(run)) {
    this.#schedule = schedule;
  }

  /** Adds a handler for `method` (or `*` for all); the returned function removes it, idempotently. */
  on(method: string, handler: NotificationHandler): () => void {
    let set = this.#byMethod.get(method);
    if (!set) {
      set = new Set();
      this.#byMethod.set(method, set);
    }
    set.add(handler);
    const own = set;
    return () => {
      own.delete(handler);
      if (own.size === 0 && this.#byMethod.get(method) === own) this.#byMethod.delete(method);
    };
  }

  /** How many handlers are registered, over all methods. */
  get size(): number {
    let n = 0;
    for (const set of this.#byMethod.values()) n += set.size;
    return n;
  }

  /** Hands a notification to its handlers, later. Returns at once; never throws. */
  dispatch(message: JsonRpcNotification): void {
    const exact = this.#byMethod.get(message.method);
    const any = this.#byMethod.get(ANY_METHOD);
    if (!exact?.size && !any?.size) return;
    // Taken now: a handler added after the notification arrived does not receive it.
    const handlers = [...(exact ?? []), ...(any ?? [])];
    const notification: ServerNotification = { method: message.method, params: message.params ?? {} };
    this.#schedule(() => {
      for (const handler of handlers) {
        // One removed in the meantime is not called: its unsubscribe came first.
        if (!exact?.has(handler) && !any?.has(handler)) continue;
        try {
          const pending = handler(notification);
          if (pending && typeof pending.then === "function") pending.then(undefined, () => {});
        } catch {
          // The handler's failure is its own; the others still run.
        }
      }
    });
  }

  clear(): void {
    this.#byMethod.clear();
  }
}
