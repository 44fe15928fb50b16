import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { authError, limitError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { FetchFn } from "../options/deps.ts";
import { ByteBudget, readBounded } from "../transport/byte-budget.ts";
import { asTransportError, discard, fetchOrFail } from "../transport/http-common.ts";

type Body = ConstructorParameters<typeof Response>[0];

/** Ceiling for one authorization response (metadata, registration, tokens), under the phase's own. */
export const MAX_AUTH_RESPONSE_BYTES = 1024 * 1024;

/** Request and response fields that carry credentials; each is taught to the redactor as it passes. */
const SECRET_FIELDS = [
  "access_token",
  "refresh_token",
  "id_token",
  "code",
  "code_verifier",
  "client_secret",
  "client_assertion",
  "registration_access_token",
  "assertion",
  "subject_token",
  "actor_token",
];

/** What every authorization request is bounded by and who learns its secrets. */
export interface AuthFetchContext {
  /** The caller's fetch (deps.fetch): never the authorizing wrapper, so no request loops. */
  fetch: FetchFn;
  /** The request's signal: the stage or call deadline that triggered the authorization. */
  signal: AbortSignal;
  /** Raw bytes accepted for one response. */
  maxBytes: number;
  redactor: Redactor;
}

/** Loopback hosts: the only ones reached over plain HTTP (local development and tests). */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Authorization endpoints must be HTTPS (MCP authorization, communication security), or loopback. */
export function assertSecureEndpoint(url: URL, redactor: Redactor): void {
  if (url.protocol === "https:" || (url.protocol === "http:" && isLoopback(url))) return;
  throw authError("insecure_endpoint", "an authorization endpoint was not HTTPS; refused", { redactor });
}

function learnFrom(params: URLSearchParams, redactor: Redactor): void {
  redactor.learn(SECRET_FIELDS.flatMap((k) => params.getAll(k)));
}

function learnFromJson(bytes: Uint8Array, redactor: Redactor): void {
  if (bytes.byteLength === 0) return;
  try {
    const doc: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof doc !== "object" || doc === null) return;
    const values = SECRET_FIELDS.map((k) => (doc as Record<string, unknown>)[k]).filter(
      (v): v is string => typeof v === "string",
    );
    redactor.learn(values);
  } catch {
    // Not JSON: nothing in it is ours to learn.
  }
}

/**
 * The fetch handed to oauth4webapi as its `[customFetch]`: the caller's fetch, on the deadline's
 * signal, refusing non-HTTPS endpoints, under the transports' redirect policy (a redirect to
 * another origin is refused before anything reaches it; a same-origin one is followed a bounded
 * number of times), with every response body read through a byte ceiling (a declared length
 * above it is refused unread) and handed on as a new Response built from the bounded bytes.
 * Credentials in requests and responses are learned by the redactor on the way.
 */
export function authFetch(ctx: AuthFetchContext) {
  return async (
    url: string,
    init: { method: string; headers: Record<string, string>; body?: unknown; redirect?: "manual" },
  ): Promise<Response> => {
    const target = new URL(url);
    assertSecureEndpoint(target, ctx.redactor);
    const body = init.body;
    if (body instanceof URLSearchParams) learnFrom(body, ctx.redactor);
    else if (typeof body === "string") learnFromJson(new TextEncoder().encode(body), ctx.redactor);
    const auth = init.headers.authorization ?? init.headers.Authorization;
    if (auth) ctx.redactor.learn([auth, auth.replace(/^\S+\s+/, "")]);
    const where = { stage: "http_request" as const, phase: "discovery" as const, redactor: ctx.redactor };
    const response = await fetchOrFail(
      ctx.fetch,
      target,
      { method: init.method, headers: init.headers, body: body as Body },
      ctx.signal,
      where,
    );
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > ctx.maxBytes) {
      discard(response);
      throw limitError(
        where,
        "response_too_large",
        `an authorization response declared more than the ${ctx.maxBytes}-byte ceiling`,
        0,
        { maxBytes: ctx.maxBytes },
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = response.body
        ? await readBounded(response.body, new ByteBudget(ctx.maxBytes), ctx.signal)
        : new Uint8Array();
    } catch (error) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      if (error instanceof ByteCeilingExceeded) {
        throw limitError(
          where,
          "response_too_large",
          `an authorization response passed the ${error.maxBytes}-byte ceiling`,
          error.observedBytes,
          { maxBytes: error.maxBytes },
        );
      }
      throw asTransportError(error, where);
    }
    learnFromJson(bytes, ctx.redactor);
    const empty = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(empty ? null : (bytes as Body), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
