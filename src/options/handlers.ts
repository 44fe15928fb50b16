import type { JsonObject } from "../jsonrpc/messages.ts";

/**
 * What a handler is told besides the request: a signal that aborts when the answer is no longer
 * wanted (the connection is closing, or the call phase's time budget for an answer has passed).
 */
export interface HandlerContext {
  signal: AbortSignal;
}

/**
 * Answers to what servers may ask of a client. Each one given is declared as a capability
 * (legacy: in `initialize`; modern: in every request's `_meta`) and used both for server
 * requests (legacy) and for `input_required` rounds (2026-07-28). Without one, a server that
 * asks anyway is refused (`-32601`), or in a modern round an elicitation is declined.
 *
 * Server requests pass the session's inbound gate first (src/jsonrpc/inbound-gate.ts): at most
 * MAX_INBOUND_IN_FLIGHT handlers and answers at once, within a shared per-second budget. A
 * request past either is dropped unanswered: a flooding server cannot run handlers past them.
 * Each handler then runs under the call phase's time budget, like a call: when it passes, the
 * handler's signal aborts and the server is answered with an error, so a handler that never
 * settles gives its place in the gate back.
 */
export interface ClientHandlers {
  /** `elicitation/create`: return `{ action: "accept", content }`, `{ action: "decline" }` or `{ action: "cancel" }`. */
  elicitation?: (params: JsonObject, context: HandlerContext) => Promise<JsonObject> | JsonObject;
  /**
   * The elicitation modes `elicitation` serves: `form` (the default, declared as
   * `elicitation: {}`) and `url` (SEP-1036: `mode: "url"` requests carry a `url` and an
   * `elicitationId`; `accept` means the user agreed to open it). With `url` the capability is
   * declared mode by mode (`elicitation: { form: {}, url: {} }`).
   */
  elicitationModes?: readonly ("form" | "url")[];
  /** `sampling/createMessage`: return a CreateMessageResult. */
  sampling?: (params: JsonObject, context: HandlerContext) => Promise<JsonObject> | JsonObject;
  /** `roots/list`: return `{ roots: [{ uri, name? }] }`. */
  roots?: (context: HandlerContext) => Promise<JsonObject> | JsonObject;
}

/**
 * The client capabilities the handlers amount to: only what the application provides. Tasks are
 * not among them: this client runs no tasks for servers. (A request that accepts a task in reply
 * declares the 2026-07-28 tasks extension on its own; see src/client/request-path.ts.)
 */
export function capabilitiesOf(handlers: ClientHandlers | undefined): JsonObject {
  const caps: JsonObject = {};
  if (handlers?.elicitation) {
    const modes = handlers.elicitationModes;
    caps.elicitation = modes?.includes("url") ? Object.fromEntries(modes.map((m) => [m, {}])) : {};
  }
  if (handlers?.sampling) caps.sampling = {};
  if (handlers?.roots) caps.roots = { listChanged: false };
  return caps;
}
