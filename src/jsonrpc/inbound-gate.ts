import type { Clock } from "../lifecycle/clock.ts";

/**
 * Server requests being worked on at once: a handler still running, or an answer of ours (a
 * result, a refusal, a `ping` reply) whose send has not settled. Past it a server request is
 * dropped unanswered, since answering is itself work: on HTTP every answer is a POST.
 */
export const MAX_INBOUND_IN_FLIGHT = 16;

/**
 * Server requests and unsolicited notifications admitted per second, sustained, across all
 * methods. Well above what a working server sends (a few requests per call, log lines); a
 * flood past it is dropped.
 */
export const INBOUND_RATE_PER_SECOND = 200;

/** Messages admitted back to back after a quiet spell: the size of the token bucket. */
export const INBOUND_BURST = 400;

/** Drops are reported at the first one, then at most once per this interval (and at close). */
export const INBOUND_REPORT_INTERVAL_MS = 1_000;

/** The bounds of one gate; sessions use the constants above. */
export interface InboundLimits {
  maxInFlight: number;
  ratePerSecond: number;
  burst: number;
  reportIntervalMs: number;
}

export const INBOUND_LIMITS: Readonly<InboundLimits> = Object.freeze({
  maxInFlight: MAX_INBOUND_IN_FLIGHT,
  ratePerSecond: INBOUND_RATE_PER_SECOND,
  burst: INBOUND_BURST,
  reportIntervalMs: INBOUND_REPORT_INTERVAL_MS,
});

/** Messages dropped since the previous report, by kind. */
export interface InboundDrops {
  requests: number;
  notifications: number;
}

/**
 * One admitted server request's claim on the bound. Its signal aborts when the session closes
 * (the handler's answer and our send are no longer wanted); `release` gives the place back once
 * the answer's send has settled, and is idempotent.
 */
export interface InboundSlot {
  readonly signal: AbortSignal;
  release(): void;
}

/**
 * Admission for everything a server starts: server requests of every method (answered, served
 * or refused alike) and unsolicited notifications share one token bucket; requests and the
 * answers we send back also share one bound on work in flight. Each decision is O(1) and keeps
 * nothing for what it drops, so a flood costs a counter, never a queue.
 *
 * Every slot has its own AbortController, aborted together at `close()`: one signal per answer
 * in flight, not one more listener on a long-lived signal per answer.
 */
export class InboundGate {
  readonly #clock: Pick<Clock, "now">;
  readonly #limits: InboundLimits;
  readonly #onDropped: (drops: InboundDrops) => void;
  readonly #slots = new Set<AbortController>();
  /** Tokens in thousandths, so whole milliseconds at a whole rate refill exactly. */
  #milliTokens: number;
  #filledAt: number;
  #unreported: InboundDrops = { requests: 0, notifications: 0 };
  #reportedAt: number | undefined;
  readonly #total: InboundDrops = { requests: 0, notifications: 0 };
  #closed = false;

  /** `onDropped` hears counts, never messages; whatever it throws is its own. */
  constructor(
    clock: Pick<Clock, "now">,
    onDropped: (drops: InboundDrops) => void,
    limits: InboundLimits = INBOUND_LIMITS,
  ) {
    this.#clock = clock;
    this.#limits = limits;
    this.#onDropped = onDropped;
    this.#milliTokens = limits.burst * 1000;
    this.#filledAt = clock.now();
  }

  /** Requests in flight: handlers running plus answers being sent. */
  get inFlight(): number {
    return this.#slots.size;
  }

  /** Everything dropped since the gate opened. */
  get dropped(): Readonly<InboundDrops> {
    return { ...this.#total };
  }

  /**
   * A server request: a slot if it is to be worked on (a token taken and a place in flight held
   * until released), undefined if it is dropped unanswered (counted).
   */
  admitRequest(): InboundSlot | undefined {
    if (this.#closed) return undefined;
    if (this.#slots.size >= this.#limits.maxInFlight || !this.#take()) {
      this.#drop("requests");
      return undefined;
    }
    const controller = new AbortController();
    this.#slots.add(controller);
    return {
      signal: controller.signal,
      release: () => {
        this.#slots.delete(controller);
      },
    };
  }

  /** An unsolicited notification: whether to deliver it (a token taken) or drop it (counted). */
  admitNotification(): boolean {
    if (this.#closed) return false;
    if (this.#take()) return true;
    this.#drop("notifications");
    return false;
  }

  /** Aborts every slot's signal with `reason` and reports drops not yet reported. Idempotent. */
  close(reason?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const controller of slots) controller.abort(reason);
    if (this.#unreported.requests + this.#unreported.notifications > 0) this.#report(this.#clock.now());
  }

  #take(): boolean {
    const now = this.#clock.now();
    const elapsed = now - this.#filledAt;
    if (elapsed > 0) {
      this.#milliTokens = Math.min(
        this.#limits.burst * 1000,
        this.#milliTokens + elapsed * this.#limits.ratePerSecond,
      );
      this.#filledAt = now;
    }
    if (this.#milliTokens < 1000) return false;
    this.#milliTokens -= 1000;
    return true;
  }

  #drop(kind: keyof InboundDrops): void {
    this.#unreported[kind]++;
    this.#total[kind]++;
    const now = this.#clock.now();
    if (this.#reportedAt === undefined || now - this.#reportedAt >= this.#limits.reportIntervalMs)
      this.#report(now);
  }

  #report(now: number): void {
    const drops = this.#unreported;
    this.#unreported = { requests: 0, notifications: 0 };
    this.#reportedAt = now;
    try {
      this.#onDropped(drops);
    } catch {
      // The observer's failure is its own; admission goes on.
    }
  }
}
