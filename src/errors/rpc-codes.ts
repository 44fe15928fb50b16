/** JSON-RPC error codes the client sends or recognises by number. */

/** We answer a server request for a method we do not serve with this. */
export const METHOD_NOT_FOUND = -32601;
/** We answer a server request whose handler failed with this. */
export const INTERNAL_ERROR = -32603;

// Modern (2026-07-28) errors: only a modern server sends them (N5).

/** The request's headers and its `_meta` disagree. */
export const HEADER_MISMATCH = -32020;
/** The request needs a client capability it did not declare. */
export const MISSING_CAPABILITY = -32021;
/** The protocol version asked for is not supported; `data.supported` lists those that are. */
export const UNSUPPORTED_VERSION = -32022;

/** The `supported` list a -32022 carries in its `data`, if it carries one. */
export function supportedVersionsOf(data: unknown): readonly unknown[] | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const supported = (data as { supported?: unknown }).supported;
  return Array.isArray(supported) ? supported : undefined;
}

/**
 * A JSON-RPC error only a modern server sends: -32020, -32021, or -32022 with its list of
 * supported versions (a -32022 without one proves nothing: legacy servers have used the number).
 */
export function isModernRpcError(code: number, data: unknown): boolean {
  if (code === UNSUPPORTED_VERSION) return supportedVersionsOf(data) !== undefined;
  return code === MISSING_CAPABILITY || code === HEADER_MISMATCH;
}

/** A modern refusal of the request itself (not of its version): never retried (R4), fatal (C6). */
export function isModernRefusal(code: number | undefined): boolean {
  return code === HEADER_MISMATCH || code === MISSING_CAPABILITY;
}
