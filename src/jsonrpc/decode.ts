import { asMessages, type JsonRpcMessage } from "./messages.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Why a frame was refused; the caller turns it into a typed protocol error. */
export type DecodeFailure = "invalid_utf8" | "invalid_json" | "not_jsonrpc";

export type DecodeResult = { ok: true; messages: JsonRpcMessage[] } | { ok: false; reason: DecodeFailure };

/** Decodes one frame's bytes (strict UTF-8, then JSON, then the JSON-RPC envelope). */
export function decodeFrame(bytes: Uint8Array): DecodeResult {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { ok: false, reason: "invalid_utf8" };
  }
  return decodeText(text);
}

export function decodeText(text: string): DecodeResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "invalid_json" };
  }
  const messages = asMessages(value);
  return messages ? { ok: true, messages } : { ok: false, reason: "not_jsonrpc" };
}
