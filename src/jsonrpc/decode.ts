import { flattenBelow, MAX_JSON_DEPTH, nestsDeeperThan } from "./json-depth.ts";
import { asMessages, type JsonRpcMessage, type JsonRpcRefusedReply, refusedRepliesIn } from "./messages.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Why a frame was refused; the caller turns it into a typed protocol error. */
export type DecodeFailure = "invalid_utf8" | "invalid_json" | "not_jsonrpc" | "too_deep";

export type DecodeResult = { ok: true; messages: JsonRpcMessage[] } | { ok: false; reason: DecodeFailure };

/**
 * Levels of a refused frame kept to read its envelope: a batch (1) and its messages (2), enough
 * to see each message's id and whether it carried a `result` or an `error`.
 */
const ENVELOPE_LEVELS = 2;

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

/**
 * Decodes one frame's text. Nesting deeper than MAX_JSON_DEPTH is refused before parsing, so
 * nothing downstream walks such a value. The replies a refused frame carried are still admitted,
 * as refused replies without their values: the requests they answer fail with a typed error
 * instead of waiting for a reply that came. Notifications and server requests in it are dropped:
 * the stream is still in step (the frame was delimited and within its byte ceiling), so only
 * that message is lost.
 */
export function decodeText(text: string): DecodeResult {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    const refused = refusedReplies(text);
    return refused.length > 0 ? { ok: true, messages: refused } : { ok: false, reason: "too_deep" };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "invalid_json" };
  }
  const messages = asMessages(value);
  return messages ? { ok: true, messages } : { ok: false, reason: "not_jsonrpc" };
}

/**
 * Decodes one frame already parsed (by the streaming parser, which builds nothing past
 * MAX_JSON_DEPTH and says so): the same outcomes as `decodeText` for the same text.
 */
export function decodeValue(value: unknown, tooDeep: boolean): DecodeResult {
  if (tooDeep) {
    const refused = refusedRepliesIn(value, "too_deep");
    return refused.length > 0 ? { ok: true, messages: refused } : { ok: false, reason: "too_deep" };
  }
  const messages = asMessages(value);
  return messages ? { ok: true, messages } : { ok: false, reason: "not_jsonrpc" };
}

function refusedReplies(text: string): JsonRpcRefusedReply[] {
  let envelope: unknown;
  try {
    envelope = JSON.parse(flattenBelow(text, ENVELOPE_LEVELS));
  } catch {
    return [];
  }
  return refusedRepliesIn(envelope, "too_deep");
}
