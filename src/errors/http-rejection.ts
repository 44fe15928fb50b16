import type { RpcErrorObject } from "./rpc-reply-error.ts";

/** What the body of a refused HTTP request was, as far as era detection cares. */
export type BodyKind = "empty" | "jsonrpc" | "json" | "text" | "unreadable";

/**
 * A POST or GET the server answered with a non-2xx status. Internal: the classifier labels it
 * (status, body kind, the JSON-RPC error in it) and it becomes a TetherError at the public boundary.
 */
export class HttpRejection extends Error {
  override readonly name = "HttpRejection";
  constructor(
    readonly status: number,
    readonly bodyKind: BodyKind,
    /** The JSON-RPC error in the body, if the body was one. */
    readonly rpc: RpcErrorObject | undefined,
    /** `Retry-After`, in ms, when the server sent one that parses. */
    readonly retryAfterMs: number | undefined,
    readonly observedBytes: number,
  ) {
    super(`HTTP ${status}`);
  }
}
