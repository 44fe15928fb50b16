/**
 * What changes when a message crosses the bridge between eras: the per-request `_meta` envelope
 * a 2026-07-28 host sends (removed before forwarding: the client adds its own for a modern
 * server), the fields a 2026-07-28 result must carry (added for a modern host, removed for a
 * legacy one), the server capabilities as each kind of host may rely on them, and a failure as
 * the JSON-RPC error a host receives.
 */

import type { Era } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import { METHOD_NOT_FOUND } from "../errors/rpc-codes.ts";
import { asTetherError, type TetherError } from "../errors/tether-error.ts";
import type { JsonObject, JsonRpcErrorObject, JsonValue } from "../jsonrpc/messages.ts";

export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_LOG_LEVEL = "io.modelcontextprotocol/logLevel";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/** The envelope keys a modern host puts in `_meta`; the bridge speaks its own envelope upstream. */
const ENVELOPE_KEYS = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL];

/** Results a 2026-07-28 server marks cacheable (`ttlMs`, `cacheScope` required). */
const CACHEABLE = new Set([
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/read",
  "resources/templates/list",
]);

/** JSON-RPC codes for requests the host got wrong, and for the bridge's own failures. */
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** A failure on the way to the server or back: the typed code and reason are in `data`. */
export const UPSTREAM_FAILURE = -32000;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The host's `_meta`, or an empty object. */
export function metaOf(params: JsonObject | undefined): JsonObject {
  return isObject(params?._meta) ? params._meta : {};
}

/** Whether a request carries the 2026-07-28 envelope (then it is a modern host's request). */
export function isModernRequest(params: JsonObject | undefined): boolean {
  return typeof metaOf(params)[META_PROTOCOL_VERSION] === "string";
}

/**
 * Params without the host's envelope; `_meta` is dropped when nothing else was in it. Params with
 * no envelope key are returned as they are. The copy is made by rest destructuring: own keys only
 * (a `__proto__` key stays a key), and no `delete`, which would turn it into a slower
 * dictionary-mode object for the client to serialise.
 */
export function withoutEnvelope(params: JsonObject | undefined): JsonObject | undefined {
  if (params === undefined || !isObject(params._meta)) return params;
  const own = params._meta;
  if (!ENVELOPE_KEYS.some((key) => key in own)) return params;
  const { _meta: _envelope, ...out } = params;
  const {
    [META_PROTOCOL_VERSION]: _version,
    [META_CLIENT_CAPABILITIES]: _capabilities,
    [META_CLIENT_INFO]: _info,
    [META_LOG_LEVEL]: _level,
    ...meta
  } = own;
  if (Object.keys(meta).length > 0) out._meta = meta;
  return out;
}

/**
 * A server's result shaped for the host's era, in place: the result is the bridge's own (parsed
 * for this one reply, held by nothing else), so it is not copied. `serverInfo` is shared by every
 * reply and is not changed.
 */
export function resultFor(
  hostEra: Era,
  method: string,
  result: JsonObject,
  serverInfo: JsonObject | undefined,
): JsonObject {
  if (hostEra === "modern") {
    if (typeof result.resultType !== "string") result.resultType = "complete";
    if (CACHEABLE.has(method)) {
      if (typeof result.ttlMs !== "number") result.ttlMs = 0;
      if (result.cacheScope !== "public" && result.cacheScope !== "private") result.cacheScope = "private";
    }
    if (serverInfo)
      result._meta = isObject(result._meta)
        ? { ...result._meta, [META_SERVER_INFO]: serverInfo }
        : { [META_SERVER_INFO]: serverInfo };
    return result;
  }
  // Removed only where present: a delete turns the object into a slower dictionary-mode one.
  if ("resultType" in result) delete result.resultType;
  if ("ttlMs" in result) delete result.ttlMs;
  if ("cacheScope" in result) delete result.cacheScope;
  if (isObject(result._meta) && META_SERVER_INFO in result._meta) {
    const { [META_SERVER_INFO]: _info, ...meta } = result._meta;
    if (Object.keys(meta).length === 0) delete result._meta;
    else result._meta = meta;
  }
  return result;
}

/**
 * The server's capabilities as a host of `hostEra` may rely on them through this bridge. A
 * legacy host in front of a modern server gets no `resources.subscribe` and no `listChanged`:
 * both travel on a `subscriptions/listen` stream the bridge does not open upstream, and a
 * capability it cannot carry is not announced.
 */
export function capabilitiesFor(hostEra: Era, serverEra: Era, capabilities: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(capabilities)) {
    if (hostEra === "legacy" && key === "extensions") continue;
    if (!isObject(value)) {
      out[key] = value;
      continue;
    }
    const copy: JsonObject = { ...value };
    if (hostEra === "legacy" && serverEra === "modern") {
      delete copy.listChanged;
      if (key === "resources") delete copy.subscribe;
    }
    out[key] = copy;
  }
  return out;
}

/** The capabilities a host declared, for the request at hand: a modern host's `_meta`, a legacy host's `initialize`. */
export function declaredCapabilities(params: JsonObject | undefined): JsonObject {
  const caps = metaOf(params)[META_CLIENT_CAPABILITIES];
  return isObject(caps) ? caps : {};
}

/**
 * A failure as the JSON-RPC error the host receives. A server's own JSON-RPC error keeps its
 * code and (redacted) message, so a host's handling of -32602 and the like still works; any
 * other failure is -32000, or -32602/-32601 for a request the host got wrong or that has no
 * counterpart in the server's era. `data` is the payload-free error record: code, reason, stage,
 * phase, effect and limits, never a body, a URL or a credential (but for a -32042's checked
 * `elicitations`, the URLs the server asks the user to open).
 */
export function rpcErrorFor(error: unknown, redactor: Redactor): JsonRpcErrorObject {
  const e: TetherError = asTetherError(error, { stage: "call", phase: "call", redactor });
  const record = e.recordFor(redactor) as unknown as JsonObject;
  // A -32042 (SEP-1036) is useless without the URLs it requires: its checked elicitations
  // (http(s) only, no userinfo, secrets redacted; see url-elicitation.ts) go on as the spec's
  // `data.elicitations`, beside the record. The only URLs a host's error ever carries.
  const data: JsonValue = e.urlElicitations
    ? {
        ...record,
        elicitations: e.urlElicitations.map((u) => ({
          mode: "url",
          elicitationId: u.elicitationId,
          url: u.url,
          message: u.message,
        })),
      }
    : record;
  if (e.code === "remote_error" && e.rpcCode !== undefined)
    return {
      code: e.rpcCode,
      message: typeof record.rpcMessage === "string" ? record.rpcMessage : String(record.message),
      data,
    };
  const code =
    e.code === "config" ? INVALID_PARAMS : e.reason === "not_in_era" ? METHOD_NOT_FOUND : UPSTREAM_FAILURE;
  return { code, message: String(record.message), data };
}

/** A refusal the bridge states itself (a request it cannot carry), with a reason in `data`. */
export function refusal(code: number, reason: string, message: string): JsonRpcErrorObject {
  return {
    code,
    message,
    data: { type: "error", code: "protocol", reason, stage: "call", phase: "call", message },
  };
}
