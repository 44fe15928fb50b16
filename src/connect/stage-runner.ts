import type { StageTiming } from "../client/established.ts";
import type { Stage, TransportMode } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import type { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import type { Deadline } from "../lifecycle/deadline.ts";
import type { EventSink } from "../lifecycle/events.ts";

/** Who a stage runner reports to, and as which attempt. */
export interface StageReport {
  events: EventSink;
  redactor: Redactor;
  /** The transport mode events name (the target's, even when auto detection moves on to HTTP+SSE). */
  mode: TransportMode;
  attempt: number;
  /** Told each stage as it starts (the attempt's open sessions attribute closures to it). */
  entered: (stage: Stage) => void;
}

/**
 * Runs one attempt's stages (E1, D1): each on the smaller of its own limit and what remains of
 * the establishment deadline, none once the deadline expired or the caller cancelled (E2), each
 * timed and reported as a stage_start/stage_end pair. A failure is labelled here, once, when it
 * is first seen, with the stage it was seen in; the stage_end event and the attempt's error are
 * that one label.
 */
export class StageRunner {
  readonly timings: StageTiming[] = [];
  readonly #deadline: Deadline;
  readonly #report: StageReport;
  readonly #labels = new Map<unknown, TetherError>();
  #stage: Stage = "spawn";

  constructor(deadline: Deadline, report: StageReport) {
    this.#deadline = deadline;
    this.#report = report;
  }

  /** Milliseconds since establishment began. */
  elapsedMs(): number {
    return this.#deadline.elapsedMs();
  }

  get mode(): TransportMode {
    return this.#report.mode;
  }

  get attempt(): number {
    return this.#report.attempt;
  }

  /** The stage in progress, or the last one entered: where a failure outside any stage is reported. */
  get stage(): Stage {
    return this.#stage;
  }

  run<T>(
    stage: Stage,
    limitMs: number | undefined,
    reason: string,
    exchange: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const signal = this.#deadline.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    this.#stage = stage;
    this.#report.entered(stage);
    return this.#timed(stage, limitMs, reason, exchange);
  }

  /**
   * The public form of a failure: labelled by the classifier the first time it is seen, at the
   * stage in progress; the same error object every time after.
   */
  label(error: unknown): TetherError {
    const known = this.#labels.get(error);
    if (known) return known;
    const failure = toPublicError(error, {
      stage: this.#stage,
      phase: "discovery",
      redactor: this.#report.redactor,
    });
    this.#labels.set(error, failure);
    return failure;
  }

  async #timed<T>(
    stage: Stage,
    limitMs: number | undefined,
    reason: string,
    exchange: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const { events, mode, attempt } = this.#report;
    const started = this.#deadline.elapsedMs();
    events.emit({ type: "stage_start", stage, elapsedMs: started, mode, attempt });
    const scope = this.#deadline.stage(limitMs, reason);
    try {
      const value = await exchange(scope.signal);
      this.#ended(stage, started, undefined);
      return value;
    } catch (error) {
      this.#ended(stage, started, this.label(error));
      throw error;
    } finally {
      scope.dispose();
    }
  }

  /** Records a stage's timing and reports its stage_end; a failed stage's with its label. */
  #ended(stage: Stage, started: number, failure: TetherError | undefined): void {
    const { events, mode, attempt } = this.#report;
    const durationMs = this.#deadline.elapsedMs() - started;
    const ok = failure === undefined;
    this.timings.push({ stage, durationMs, ok });
    events.emit({
      type: "stage_end",
      stage,
      ok,
      durationMs,
      elapsedMs: this.#deadline.elapsedMs(),
      mode,
      attempt,
      ...(failure && {
        code: failure.code,
        reason: failure.reason,
        httpStatus: failure.httpStatus,
        rpcCode: failure.rpcCode,
        cancellation: failure.cancellation,
      }),
    });
  }
}
