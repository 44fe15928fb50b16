import type {
  CancellationSource,
  ClosureCategory,
  Era,
  ErrorCode,
  Stage,
  TransportMode,
} from "../errors/codes.ts";

/** What the policy is told about a failed attempt: structured and payload-free. */
export interface AttemptFailure {
  attempt: number;
  stage: Stage;
  code: ErrorCode;
  reason: string;
  mode: TransportMode;
  era: Era | undefined;
  httpStatus: number | undefined;
  rpcCode: number | undefined;
  closure: ClosureCategory | undefined;
  cancellation: CancellationSource | undefined;
  elapsedMs: number;
  /** Whether the default classification found this failure eligible for a fresh attempt. */
  eligible: boolean;
}

/**
 * Opt-in recovery of a failed establishment by fresh attempts. Without it there is exactly one
 * attempt. The hooks can only narrow: an ineligible failure is never retried.
 */
export interface RecoveryPolicy {
  /** Attempts in all, the first included (1 to 10). */
  maxAttempts: number;
  /** Pause before the second attempt in ms, doubling after (default 100, max 10000). */
  backoffMs?: number;
  /** May veto a fresh attempt for an eligible failure; it is never asked about an ineligible one. */
  shouldRetry?: (failure: AttemptFailure) => boolean | Promise<boolean>;
  /** Marks the application's own security failures (e.g. thrown by a custom fetch): never retried. */
  isSecurityError?: (error: unknown) => boolean;
}

/** Opt-in retry of throttling (429) and unavailability (503) that named a Retry-After, during establishment only. */
export interface TransientRetryPolicy {
  /** Retries in all, across the establishment (1 to 10). */
  maxRetries: number;
}
