import type { Authorizer } from "../auth/authorizer.ts";
import { Redactor } from "../errors/redact.ts";
import { EventSink } from "../lifecycle/events.ts";
import type { ResolvedOptions } from "../options/resolve.ts";

/**
 * What one connect() works with: its resolved options (plain data) and the live objects built
 * from them once, shared by every attempt: the redactor that knows the configured secrets, the
 * event sink, and the authorizer of an HTTP server with OAuth. The OAuth modules load only for
 * such a server: a stdio connection, or one without auth, never pays for them.
 */
export interface Runtime {
  readonly options: ResolvedOptions;
  readonly redactor: Redactor;
  readonly events: EventSink;
  readonly authorizer: Authorizer | undefined;
}

export async function buildRuntime(options: ResolvedOptions): Promise<Runtime> {
  const redactor = new Redactor(options.secrets);
  const t = options.target;
  const Authorizer =
    options.auth && t.kind === "http" ? (await import("../auth/authorizer.ts")).Authorizer : undefined;
  return {
    options,
    redactor,
    events: new EventSink(options.onEvent),
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
