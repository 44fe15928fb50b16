import { readFileSync } from "node:fs";
import { configError } from "../errors/failures.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/**
 * Tool and prompt arguments: one JSON object, or HTTPie-style pairs (`key=value` is a string,
 * `key:=json` a raw JSON value), or a file holding a JSON object.
 */
export function parseToolArgs(words: readonly string[], argsFile: string | undefined): JsonObject {
  if (argsFile !== undefined) {
    if (words.length > 0)
      throw configError("invalid_args", "give arguments either inline or with --args-file, not both");
    let text: string;
    try {
      text = readFileSync(argsFile, "utf8");
    } catch (cause) {
      throw configError("invalid_args", "the --args-file could not be read", cause);
    }
    return objectFrom(text, "--args-file");
  }
  if (words.length === 1 && words[0]!.trimStart().startsWith("{"))
    return objectFrom(words[0]!, "the arguments");
  const out: JsonObject = {};
  for (const word of words) {
    const raw = /^([^=:]+):=(.*)$/s.exec(word);
    if (raw) {
      try {
        out[raw[1]!] = JSON.parse(raw[2]!) as JsonValue;
      } catch (cause) {
        throw configError("invalid_args", `the value of ${raw[1]} is not valid JSON`, cause);
      }
      continue;
    }
    const plain = /^([^=]+)=(.*)$/s.exec(word);
    if (!plain)
      throw configError("invalid_args", "arguments are one JSON object, or key=value and key:=json pairs");
    out[plain[1]!] = plain[2]!;
  }
  return out;
}

function objectFrom(text: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw configError("invalid_args", `${what} must be a JSON object`, cause);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw configError("invalid_args", `${what} must be a JSON object`);
  }
  return value as JsonObject;
}
