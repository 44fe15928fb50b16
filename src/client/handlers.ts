import { Interrupt } from "../errors/interrupt.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { raceAbort, timeoutSignal } from "../lifecycle/abort.ts";
import type { Clock } from "../lifecycle/clock.ts";
import type { ClientHandlers, HandlerContext } from "../options/handlers.ts";

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
