import { type DecodeResult, decodeText, decodeValue } from "../jsonrpc/decode.ts";
import { MAX_JSON_DEPTH } from "../jsonrpc/json-depth.ts";
import { JsonStreamParser, JsonStreamSyntaxError } from "../jsonrpc/json-stream.ts";
import { BodyNotUtf8, type ByteBudget, boundedChunks } from "./byte-budget.ts";

/**
 * Past this much text a JSON reply is parsed as it streams. Below it the text is joined and
 * parsed whole, which costs less CPU; above it joining would hold the reply as text and as value
 * at once (and once more while the text is flattened for parsing).
 */
export const STREAM_PARSE_ABOVE_CHARS = 1024 * 1024;

/**
 * Reads a JSON body under the budget and decodes it as JSON-RPC: strict UTF-8 decoded chunk by
 * chunk (the raw bytes are let go as they are read), small bodies parsed whole, large ones as
 * they arrive. Throws BodyNotUtf8 for text that is not UTF-8; a parse failure is a DecodeResult.
 */
export async function readBoundedMessages(
  body: ReadableStream<Uint8Array>,
  budget: ByteBudget,
  signal: AbortSignal,
): Promise<DecodeResult> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const decode = (chunk?: Uint8Array) => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw new BodyNotUtf8("invalid UTF-8");
    }
  };
  let text = "";
  let parser: JsonStreamParser | undefined;
  try {
    for await (const chunk of boundedChunks(body, budget, signal)) {
      const piece = decode(chunk);
      if (parser) parser.push(piece);
      else {
        text += piece;
        if (text.length > STREAM_PARSE_ABOVE_CHARS) {
          parser = new JsonStreamParser(MAX_JSON_DEPTH);
          parser.push(text);
          text = "";
        }
      }
    }
    const tail = decode();
    if (!parser) return decodeText(text + tail);
    parser.push(tail);
    const { value, tooDeep } = parser.end();
    return decodeValue(value, tooDeep);
  } catch (error) {
    if (error instanceof JsonStreamSyntaxError) return { ok: false, reason: "invalid_json" };
    throw error;
  }
}
