/**
 * What the rest of tether knows of tracing: an interface, no OpenTelemetry. The implementation
 * (otel.ts) is loaded by connect() only when `tracing` is on, and it alone loads the optional peer
 * `@opentelemetry/api`; with tracing off nothing here runs and the request path takes one branch.
 */
import type { TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Reply, Session } from "../jsonrpc/session.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";

/** One span and one duration measurement per request, its trace context carried in `params._meta`. */
export interface RequestTracing {
  request(
    method: string,
    params: JsonObject | undefined,
    session: Session,
    protocolVersion: string,
    send: (params: JsonObject | undefined) => Promise<Reply>,
  ): Promise<Reply>;
}

/** A connection's tracing: the establishment's spans, built from its lifecycle events, and its requests'. */
export interface ConnectionTracing extends RequestTracing {
  /** Every lifecycle event, as it is emitted: attempts and stages open and close their spans. */
  event(event: LifecycleEvent): void;
  /** Establishment failed with this error: its span ends so. */
  failed(error: TetherError): void;
}
