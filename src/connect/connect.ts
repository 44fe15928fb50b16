import type { Client } from "../client/api.ts";
import { type ClientExtras, ConnectedClient } from "../client/client.ts";
import { outputValidationOf } from "../client/output-schema.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import { callerSignal, raceAbort, sleep } from "../lifecycle/abort.ts";
import { Deadline } from "../lifecycle/deadline.ts";
import type { ConnectOptions } from "../options/options.ts";
import { type ResolvedOptions, resolveOptions } from "../options/resolve.ts";
import { CLEANUP_GRACE_MS } from "../transport/child-process.ts";
import type { Era, TransportMode } from "../transport/transport.ts";
import { Attempt } from "./establish.ts";
import { type AttemptFailure, classifyForRecovery, primaryOf } from "./recovery.ts";

/**
 * Establishes a client: one deadline (the discovery phase's time budget) from before any I/O to
 * a ready client, every recovery attempt and back-off included, and tool listing too when
 * `prefetchTools` is set. Rejects with a TetherError; never returns a client whose transport is
 * already closed, and never one whose caller cancelled.
 */
export async function connect(options: ConnectOptions): Promise<Client> {
  const o = resolveOptions(options);
  const extras: ClientExtras = { validateOutput: outputValidationOf(options.validateOutput) };
  const caller = callerSignal(options.signal);
  const deadline = new Deadline(o.clock, o.discovery.timeoutMs, caller.signal);
  const mode: TransportMode =
    o.target.kind === "stdio" ? "stdio" : o.target.transport === "sse" ? "sse" : "streamable-http";
  const failures: TetherError[] = [];
  try {
    for (let n = 1; ; n++) {
      const seen: { era?: Era } = {};
      try {
        return await attemptOnce(o, deadline, n, mode, seen, extras);
      } catch (error) {
        const failure = error as TetherError;
        failure.attempt = n;
        failures.push(failure);
        let stop = await nextStep(o, deadline, failure, n, mode, seen.era);
        if (stop instanceof TetherError) {
          // Cancelled (or out of time) during the back-off: that outcome is reported too.
          failures.push(stop);
          stop = stop.code === "cancelled" ? "cancelled" : "deadline";
        }
        if (stop) {
          const primary = primaryOf(failures, o.recovery.isSecurityError);
          primary.attempts = n;
          primary.laterFailures = failures.filter((f) => f !== primary);
          if (o.recovery.maxAttempts > 1) primary.recoveryStopped = stop;
          throw primary;
        }
      }
    }
  } finally {
    deadline.dispose();
    caller.dispose();
  }
}

/** One attempt, from a fresh transport to a ready client (and its tools, if asked). */
async function attemptOnce(
  o: ResolvedOptions,
  deadline: Deadline,
  n: number,
  mode: TransportMode,
  seen: { era?: Era },
  extras: ClientExtras,
): Promise<Client> {
  o.events.emit({ type: "attempt_start", elapsedMs: deadline.elapsedMs(), mode, attempt: n });
  const attempt = new Attempt(o, deadline, n);
  let client: ConnectedClient | undefined;
  try {
    const established = await attempt.run();
    client = new ConnectedClient(established, o, { ...extras, attempts: n });
    if (o.prefetchTools) {
      // The establishment deadline's signal bounds the listing; the budget it reports is the whole one.
      await client.listTools({ signal: deadline.signal, timeoutMs: o.discovery.timeoutMs });
    }
    // The caller may have cancelled, or the deadline passed, just as the last stage succeeded.
    if (deadline.signal.aborted) throw deadline.signal.reason;
    if (established.session.closure) throw established.session.closure;
    established.session.transport.opened?.();
    o.events.emit({
      type: "attempt_end",
      ok: true,
      elapsedMs: deadline.elapsedMs(),
      mode: established.mode,
      attempt: n,
    });
    o.events.emit({
      type: "established",
      era: established.era,
      protocolVersion: established.protocolVersion,
      elapsedMs: deadline.elapsedMs(),
      mode: established.mode,
      attempt: n,
    });
    return client;
  } catch (error) {
    const failure =
      error instanceof TetherError
        ? error
        : toPublicError(error, {
            stage: client && o.prefetchTools ? "list_tools" : attempt.stage,
            phase: "discovery",
            redactor: o.redactor,
          });
    seen.era = attempt.era;
    if (client) await client.close();
    o.events.emit({
      type: "attempt_end",
      ok: false,
      code: failure.code,
      reason: failure.reason,
      stage: failure.stage,
      elapsedMs: deadline.elapsedMs(),
      mode,
      attempt: n,
    });
    throw failure;
  }
}

/**
 * Decides whether a fresh attempt follows a failure. Returns undefined to go on (after the
 * back-off), or the reason to stop. The classification is asked first; the policy's hook may
 * only veto what it allows, and a hook that ignores the deadline is not awaited past the grace.
 */
async function nextStep(
  o: ResolvedOptions,
  deadline: Deadline,
  failure: TetherError,
  n: number,
  mode: TransportMode,
  era: Era | undefined,
): Promise<string | TetherError | undefined> {
  const verdict = classifyForRecovery(failure, o.recovery.isSecurityError);
  let stop: string | undefined;
  if (o.recovery.maxAttempts === 1) stop = "recovery_off";
  else if (!verdict.eligible) stop = verdict.why;
  else if (n >= o.recovery.maxAttempts) stop = "max_attempts";
  else if (deadline.signal.aborted) stop = "deadline";
  if (!stop && o.recovery.shouldRetry) {
    const info: AttemptFailure = {
      attempt: n,
      stage: failure.stage,
      code: failure.code,
      reason: failure.reason,
      mode,
      era,
      httpStatus: failure.httpStatus,
      rpcCode: failure.rpcCode,
      closure: failure.closure,
      cancellation: failure.cancellation,
      elapsedMs: deadline.elapsedMs(),
      eligible: true,
    };
    // The hook is the caller's code: raced against the deadline plus the grace on a timer that
    // keeps the process alive, since nothing else may be pending while it decides.
    const graced = new AbortController();
    const timer = o.clock.setTimeout(
      () => graced.abort(),
      Math.max(1, deadline.remainingMs()) + CLEANUP_GRACE_MS,
      true,
    );
    try {
      const yes = await raceAbort(
        Promise.resolve().then(() => o.recovery.shouldRetry!(Object.freeze(info))),
        graced.signal,
      );
      if (yes !== true) stop = "policy_veto";
    } catch {
      stop = "policy_veto";
    } finally {
      o.clock.clearTimeout(timer);
    }
  }
  const backoff = o.recovery.backoffMs * 2 ** (n - 1);
  // Fails at once rather than sleeping away the rest of the budget.
  if (!stop && backoff >= deadline.remainingMs()) stop = "deadline";
  if (o.recovery.maxAttempts > 1) {
    o.events.emit({
      type: "recovery",
      decision: stop ? "stop" : "retry",
      why: stop ?? verdict.why,
      code: failure.code,
      stage: failure.stage,
      httpStatus: failure.httpStatus,
      rpcCode: failure.rpcCode,
      cancellation: failure.cancellation,
      elapsedMs: deadline.elapsedMs(),
      mode,
      attempt: n,
    });
  }
  if (stop) return stop;
  try {
    await sleep(o.clock, backoff, deadline.signal);
  } catch (error) {
    return toPublicError(error, { stage: failure.stage, phase: "discovery", redactor: o.redactor });
  }
  return undefined;
}
