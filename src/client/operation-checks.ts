import { configError, protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { isObject } from "./shapes.ts";

/**
 * Checks of what a caller passes an operation, made before anything is sent: a bad value is a
 * `config` error naming it, and a method the negotiated era removed is refused unsent.
 */

/** A generic request's method and params. */
export function checkMethod(method: string, params: JsonObject | undefined): void {
  if (typeof method !== "string" || method === "")
    throw configError("invalid_option", "method must be a non-empty string");
  if (params !== undefined && !isObject(params))
    throw configError("invalid_option", "params must be an object");
}

/** A resource URI. */
export function checkUri(uri: unknown): string {
  if (typeof uri !== "string" || uri === "")
    throw configError("invalid_option", "uri must be a non-empty string");
  return uri;
}

/** A task's requested time to live: absent, or a whole number of ms. */
export function ttlOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0)
    throw configError("invalid_limit", "task.ttlMs must be a positive whole number of milliseconds");
  return value;
}

/** Methods 2026-07-28 removed are refused unsent there, rather than sent to fail. */
export function refuseIfModern(
  negotiated: { era: string; protocolVersion: string },
  method: string,
  redactor: Redactor,
): void {
  if (negotiated.era !== "modern") return;
  throw protocolError(
    { stage: "call", phase: "call", redactor, effect: "none" },
    "not_in_era",
    `${method} is not part of protocol ${negotiated.protocolVersion}`,
  );
}
