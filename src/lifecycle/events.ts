import diagnostics from "node:diagnostics_channel";
import type {
  CancellationSource,
  ClosureCategory,
  Era,
  ErrorCode,
  Stage,
  TransportMode,
} from "../errors/codes.ts";

/** The `node:diagnostics_channel` channel every lifecycle event is published on. */
export const DIAGNOSTICS_CHANNEL = "tether:lifecycle";

interface Base {
  /** Milliseconds since establishment (or, for `closed`, since the client was created) began. */
  elapsedMs: number;
  mode: TransportMode;
  attempt: number;
}

/** Payload-free lifecycle events: stages, codes, counts and durations; never URLs, headers or bodies. */
export type LifecycleEvent =
  | (Base & { type: "attempt_start" })
  | (Base & { type: "attempt_end"; ok: boolean; code?: ErrorCode; reason?: string; stage?: Stage })
  | (Base & { type: "stage_start"; stage: Stage })
  | (Base & {
      type: "stage_end";
      stage: Stage;
      ok: boolean;
      durationMs: number;
      code?: ErrorCode;
      reason?: string;
      httpStatus?: number;
      rpcCode?: number;
      cancellation?: CancellationSource;
    })
  | (Base & {
      type: "era_evidence";
      stage: Stage;
      era: Era;
      evidence: string;
      httpStatus?: number;
      rpcCode?: number;
    })
  | (Base & { type: "established"; era: Era; protocolVersion: string })
  | (Base & {
      type: "recovery";
      /** `retry`: a fresh attempt follows; `stop`: establishment fails with the primary error. */
      decision: "retry" | "stop";
      /** Why: the classification's word, a veto, or what ran out (`max_attempts`, `deadline`). */
      why: string;
      code: ErrorCode;
      stage: Stage;
      httpStatus?: number;
      rpcCode?: number;
      cancellation?: CancellationSource;
    })
  | (Base & { type: "closed"; closure: ClosureCategory })
  | (Base & {
      type: "inbound_dropped";
      /**
       * What the server sent past the bounds on server-initiated traffic since the previous
       * report: requests left unanswered and notifications not delivered. Reported at the first
       * drop, then at most once a second, and at close.
       */
      requests: number;
      notifications: number;
    });

const channel = diagnostics.channel(DIAGNOSTICS_CHANNEL);

/** Delivers events to the caller's listener and the diagnostics channel; neither can break us. */
export class EventSink {
  readonly #listener: ((event: LifecycleEvent) => void) | undefined;

  constructor(listener: ((event: LifecycleEvent) => void) | undefined) {
    this.#listener = listener;
  }

  emit(event: LifecycleEvent): void {
    if (this.#listener) {
      try {
        const returned: unknown = this.#listener(event);
        // An async listener's rejection is its own too; never an unhandled rejection of ours.
        if (returned instanceof Promise) returned.catch(() => {});
      } catch {
        // The caller's listener failing is not our failure.
      }
    }
    if (channel.hasSubscribers) {
      try {
        channel.publish(event);
      } catch {
        // Likewise for diagnostics subscribers.
      }
    }
  }
}
