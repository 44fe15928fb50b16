import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/** A verdict on one value: `errors` are the validator's findings, for the caller's eyes only. */
export interface OutputVerdict {
  valid: boolean;
  errors?: string[];
}

/**
 * Checks `value` against a JSON Schema. Must not throw for a value that merely does not match;
 * a throw is reported as an unusable schema.
 */
export type OutputValidator = (schema: JsonObject, value: JsonValue) => OutputVerdict;
