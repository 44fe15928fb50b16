/** JSON-RPC 2.0 message types and the guards that admit a parsed value as one of them. */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: JsonObject;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: JsonObject;
}

export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: JsonObject;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: JsonValue;
}

export interface JsonRpcFailure {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

/**
 * A reply the decoder would not admit (nested past MAX_JSON_DEPTH), reduced to its envelope: the
 * request it answers fails with a typed error rather than waiting on. It never carries the
 * server's value. `answered` says whether the server sent a result (the request took effect)
 * or an error.
 */
export interface JsonRpcRefusedReply {
  jsonrpc: "2.0";
  id: JsonRpcId;
  refused: "too_deep";
  answered: "result" | "error";
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure | JsonRpcRefusedReply;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

/**
 * Admits one JSON-RPC message, or returns undefined for anything that is not one. A message is
 * exactly one of request, notification, success or failure: one that carries the keys of two
 * (a `result` beside an `error`, a `method` beside either) is refused. What is admitted is a new
 * object with only the message's own fields, never the parsed value with stray keys.
 */
export function asMessage(value: unknown): JsonRpcMessage | undefined {
  if (!isObject(value) || value.jsonrpc !== "2.0") return undefined;
  const hasResult = "result" in value;
  const hasError = "error" in value;
  if ("method" in value) {
    if (typeof value.method !== "string" || hasResult || hasError) return undefined;
    if (value.params !== undefined && !isObject(value.params)) return undefined;
    const params = value.params as JsonObject | undefined;
    if ("id" in value) {
      if (!isId(value.id)) return undefined;
      return params === undefined
        ? { jsonrpc: "2.0", id: value.id, method: value.method }
        : { jsonrpc: "2.0", id: value.id, method: value.method, params };
    }
    return params === undefined
      ? { jsonrpc: "2.0", method: value.method }
      : { jsonrpc: "2.0", method: value.method, params };
  }
  if (hasResult === hasError) return undefined;
  if (hasResult) {
    return isId(value.id) && isObject(value.result)
      ? { jsonrpc: "2.0", id: value.id, result: value.result as JsonObject }
      : undefined;
  }
  const error = value.error;
  if (!isObject(error) || typeof error.code !== "number" || !Number.isInteger(error.code)) return undefined;
  if (error.message !== undefined && typeof error.message !== "string") return undefined;
  if (value.id !== null && value.id !== undefined && !isId(value.id)) return undefined;
  return {
    jsonrpc: "2.0",
    id: (value.id ?? null) as JsonRpcId | null,
    error: {
      code: error.code,
      message: (error.message as string | undefined) ?? "",
      data: error.data as JsonValue,
    },
  };
}

/**
 * Admits a parsed frame: one message, or a batch array of them (2025-03-26 servers may batch).
 * Returns undefined when any member is not a message, so a frame is taken whole or not at all.
 */
export function asMessages(value: unknown): JsonRpcMessage[] | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    const out: JsonRpcMessage[] = [];
    for (const item of value) {
      const m = asMessage(item);
      if (!m) return undefined;
      out.push(m);
    }
    return out;
  }
  const m = asMessage(value);
  return m ? [m] : undefined;
}

/**
 * The replies in a refused frame's envelope (one message or a batch), each reduced to a
 * JsonRpcRefusedReply. Anything else in it (requests, notifications, replies without a usable
 * id) is left out.
 */
export function refusedRepliesIn(envelope: unknown, refused: "too_deep"): JsonRpcRefusedReply[] {
  const out: JsonRpcRefusedReply[] = [];
  for (const item of Array.isArray(envelope) ? envelope : [envelope]) {
    if (!isObject(item) || item.jsonrpc !== "2.0" || "method" in item || !isId(item.id)) continue;
    const hasResult = "result" in item;
    const hasError = "error" in item;
    if (hasResult === hasError) continue;
    out.push({ jsonrpc: "2.0", id: item.id, refused, answered: hasResult ? "result" : "error" });
  }
  return out;
}

export function isRefused(m: JsonRpcMessage): m is JsonRpcRefusedReply {
  return "refused" in m;
}

export function isRequest(m: JsonRpcMessage): m is JsonRpcRequest {
  return "method" in m && "id" in m;
}

export function isNotification(m: JsonRpcMessage): m is JsonRpcNotification {
  return "method" in m && !("id" in m);
}

export function isResponse(m: JsonRpcMessage): m is JsonRpcResponse {
  return !("method" in m);
}

export function isFailure(m: JsonRpcMessage): m is JsonRpcFailure {
  return "error" in m;
}
