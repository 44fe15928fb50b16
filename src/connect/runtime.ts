import type { Authorizer } from "../auth/authorizer.ts";
import { Redactor } from "../errors/redact.ts";
import { EventSink } from "../lifecycle/events.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import type { ConnectionTracing } from "../tracing/api.ts";

/**
 * What one connect() works with: its resolved options (plain data) and the live objects built
 * from them once, shared by every attempt: the redactor that knows the configured secrets, the
 * event sink, the authorizer of an HTTP server with OAuth, and tracing when it is on. The OAuth
 * modules load only for such a server, and tracing (with @opentelemetry/api) only when asked for:
 * a connection without them never pays for them.
 */
export interface Runtime {
  readonly options: ResolvedOptions;
  readonly redactor: Redactor;
  readonly events: EventSink;
  readonly authorizer: Authorizer | undefined;
  readonly tracing: ConnectionTracing | undefined;
}

export async function buildRuntime(options: ResolvedOptions): Promise<Runtime> {
  const redactor = new Redactor(options.secrets);
  const t = options.target;
  const Authorizer =
    options.auth && t.kind === "http" ? (await import("../auth/authorizer.ts")).Authorizer : undefined;
  const tracing = options.tracing
    ? await (await import("../tracing/otel.ts")).loadTracing(options.tracing, t)
    : undefined;
  const onEvent = options.onEvent;
  return {
    options,
    redactor,
    tracing,
    // Tracing sees each event first; the caller's listener's own return (a promise) is kept for the sink.
    events: new EventSink(
      tracing
        ? (event) => {
            tracing.event(event);
            return onEvent?.(event);
          }
        : onEvent,
    ),
    authorizer:
      Authorizer && options.auth && t.kind === "http"
        ? new Authorizer(options.auth, {
            server: t.url,
            fetch: options.fetch ?? globalThis.fetch,
            redactor,
            maxResponseBytes: options.discovery.maxResponseBytes,
            timeoutMs: options.discovery.timeoutMs,
            clock: options.clock,
            protocolCeiling: options.policy.ceiling,
          })
        : undefined,
  };
}
