import { readFileSync } from "node:fs";
import { configError } from "../errors/failures.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/** The most `--args-file -` reads from stdin: arguments, not a data channel. */
export const MAX_STDIN_ARGS_BYTES = 1024 * 1024;

/** Arguments as the user gave them: the object, and which keys came as `key=value` text. */
export interface GivenArgs {
  args: JsonObject;
  /** Keys given as `key=value`: text the tool's input schema may convert (number, boolean, enum). */
  plain: Set<string>;
}

/**
 * Tool and prompt arguments: one JSON object, or HTTPie-style pairs (`key=value` is a string,
 * `key:=json` a raw JSON value), or a file holding a JSON object (`stdinText` is what `-` names).
 */
export function parseToolArgs(
  words: readonly string[],
  argsFile: string | undefined,
  stdinText?: string,
): GivenArgs {
  const plain = new Set<string>();
  if (argsFile !== undefined) {
    if (words.length > 0)
      throw configError("invalid_args", "give arguments either inline or with --args-file, not both");
    let text: string;
    if (argsFile === "-" && stdinText !== undefined) text = stdinText;
    else {
      try {
        text = readFileSync(argsFile, "utf8");
      } catch (cause) {
        throw configError("invalid_args", "the --args-file could not be read", cause);
      }
    }
    return { args: objectFrom(text, "--args-file"), plain };
  }
  if (words.length === 1 && words[0]!.trimStart().startsWith("{"))
    return { args: objectFrom(words[0]!, "the arguments"), plain };
  const out: JsonObject = {};
  for (const word of words) {
    const raw = /^([^=:]+):=(.*)$/s.exec(word);
    if (raw) {
      try {
        out[raw[1]!] = JSON.parse(raw[2]!) as JsonValue;
      } catch (cause) {
        throw configError("invalid_args", `the value of ${raw[1]} is not valid JSON`, cause);
      }
      plain.delete(raw[1]!);
      continue;
    }
    const pair = /^([^=]+)=(.*)$/s.exec(word);
    if (!pair)
      throw configError("invalid_args", "arguments are one JSON object, or key=value and key:=json pairs");
    out[pair[1]!] = pair[2]!;
    plain.add(pair[1]!);
  }
  return { args: out, plain };
}

/** Reads stdin to its end, refusing more than `maxBytes` (a `config` error, not a hang or a flood). */
export async function readStdinBounded(
  stdin: NodeJS.ReadableStream,
  maxBytes = MAX_STDIN_ARGS_BYTES,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > maxBytes) {
      (stdin as NodeJS.ReadStream).destroy?.();
      throw configError("invalid_args", `--args-file - read more than ${maxBytes} bytes from stdin`);
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
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
