/**
 * A JSON-RPC error object as a server sent it. `data` is the server's own and is read for one
 * thing only: the `supported` list of a -32022 (unsupported protocol version).
 */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * A JSON-RPC error the server sent in reply to one of our requests. Internal: the classifier
 * labels it (src/errors/classify.ts) and it becomes a TetherError at the public boundary.
 */
export class RpcReplyError extends Error {
  override readonly name = "RpcReplyError";
  constructor(
    readonly error: RpcErrorObject,
    readonly httpStatus?: number,
  ) {
    super(`JSON-RPC error ${error.code}`);
  }
}
