import type { JsonObject } from "../jsonrpc/messages.ts";
import { raceAbort, timeoutSignal } from "../lifecycle/abort.ts";
import type { Clock } from "../lifecycle/clock.ts";
import { Interrupt } from "../lifecycle/interrupt.ts";

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
  /** `sampling/createMessage`: return a CreateMessageResult. */
  sampling?: (params: JsonObject, context: HandlerContext) => Promise<JsonObject> | JsonObject;
  /** `roots/list`: return `{ roots: [{ uri, name? }] }`. */
  roots?: (context: HandlerContext) => Promise<JsonObject> | JsonObject;
}

/**
 * The client capabilities the handlers amount to: only what the application provides. Nothing is
 * declared for tasks: this client does not run tasks for servers.
 */
export function capabilitiesOf(handlers: ClientHandlers | undefined): JsonObject {
  const caps: JsonObject = {};
  if (handlers?.elicitation) caps.elicitation = {};
  if (handlers?.sampling) caps.sampling = {};
  if (handlers?.roots) caps.roots = { listChanged: false };
  return caps;
}

/**
 * An accepted form elicitation with the schema's defaults filled in for fields the answer left
 * out (SEP-1034), so the server gets a complete answer whatever the handler returned.
 */
export function withDefaults(params: JsonObject, answer: JsonObject): JsonObject {
  if (answer.action !== "accept") return answer;
  const schema = params.requestedSchema;
  const properties =
    typeof schema === "object" && schema !== null && !Array.isArray(schema)
      ? (schema as JsonObject).properties
      : undefined;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return answer;
  const given = answer.content;
  const content: JsonObject =
    typeof given === "object" && given !== null && !Array.isArray(given) ? { ...given } : {};
  for (const [name, property] of Object.entries(properties)) {
    if (name in content || typeof property !== "object" || property === null || Array.isArray(property))
      continue;
    if ("default" in property && property.default !== undefined) content[name] = property.default;
  }
  return { ...answer, content };
}

/** The handler for a server request's method, if the application gave one. */
export function handlerFor(
  handlers: ClientHandlers | undefined,
  method: string,
): ((params: JsonObject, context: HandlerContext) => Promise<JsonObject> | JsonObject) | undefined {
  if (method === "elicitation/create" && handlers?.elicitation) {
    const elicit = handlers.elicitation;
    return async (params, context) => withDefaults(params, await elicit(params, context));
  }
  if (method === "sampling/createMessage") return handlers?.sampling;
  if (method === "roots/list" && handlers?.roots) {
    const roots = handlers.roots;
    return (_params, context) => roots(context);
  }
  return undefined;
}

/** The bound a server request's handler runs under. */
export interface HandlerBound {
  clock: Clock;
  /** The call phase's time budget, in ms. */
  timeoutMs: number;
}

/**
 * Serves one server request with the application's handler, under `bound`: the handler's signal
 * aborts when the session closes (`signal`) or the budget passes, and the answer is abandoned
 * then (the session answers the server with an error). Undefined when no handler serves `method`.
 */
export function serveBounded(
  handlers: ClientHandlers | undefined,
  method: string,
  params: JsonObject,
  signal: AbortSignal,
  bound: HandlerBound,
): Promise<JsonObject> | undefined {
  const handler = handlerFor(handlers, method);
  if (!handler) return undefined;
  const limit = timeoutSignal(
    bound.clock,
    bound.timeoutMs,
    new Interrupt("deadline", "deadline_exceeded", bound.timeoutMs),
    signal,
  );
  const answer = Promise.resolve().then(() => handler(params, { signal: limit.signal }));
  return raceAbort(answer, limit.signal).finally(limit.dispose);
}
