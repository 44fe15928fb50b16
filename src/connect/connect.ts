import type { Client } from "../client/api.ts";
import { outputValidationOf } from "../client/output-schema.ts";
import type { Era, TransportMode } from "../errors/codes.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import { callerSignal, raceAbort, sleep } from "../lifecycle/abort.ts";
import { Deadline } from "../lifecycle/deadline.ts";
import type { ConnectOptions } from "../options/options.ts";
import type { AttemptFailure } from "../options/recovery-policy.ts";
import { resolveOptions } from "../options/resolve.ts";
import { CLEANUP_GRACE_MS } from "../transport/grace.ts";
import { type AttemptTrace, modeOf, runAttempt } from "./attempt.ts";
import { classifyForRecovery, primaryOf } from "./recovery.ts";
import { buildRuntime, type Runtime } from "./runtime.ts";
import { TransientRetry } from "./transient-retry.ts";

/**
 * Establishes a client: one deadline (the discovery phase's time budget) from before any I/O to
 * a ready client, every recovery attempt and back-off included, and tool listing too when
 * `prefetchTools` is set. Rejects with a TetherError; never returns a client whose transport is
 * already closed, and never one whose caller cancelled.
 */
export async function connect(options: ConnectOptions): Promise<Client> {
  const o = resolveOptions(options);
  const rt = await buildRuntime(o);
  const validateOutput = outputValidationOf(options.validateOutput);
  const caller = callerSignal(options.signal);
  const deadline = new Deadline(o.clock, o.discovery.timeoutMs, caller.signal);
  // One count of transient-retry waits for the whole establishment, whichever attempt spends it (R7).
  const transient = new TransientRetry(o.transientRetries, deadline, o.clock);
  const mode = modeOf(o.target);
  const failures: TetherError[] = [];
  try {
    for (let n = 1; ; n++) {
      const trace: AttemptTrace = {};
      try {
        return await runAttempt(rt, deadline, n, trace, { validateOutput }, transient);
      } catch (error) {
        const failure = error as TetherError;
        failure.attempt = n;
        failures.push(failure);
        let stop = await nextStep(rt, deadline, failure, n, mode, trace.era);
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
          rt.tracing?.failed(primary);
          throw primary;
        }
      }
    }
  } finally {
    deadline.dispose();
    caller.dispose();
  }
}

/**
 * Decides whether a fresh attempt follows a failure. Returns undefined to go on (after the
 * back-off), or the reason to stop. The classification is asked first; the policy's hook may
 * only veto what it allows, and a hook that ignores the deadline is not awaited past the grace.
 */
async function nextStep(
  rt: Runtime,
  deadline: Deadline,
  failure: TetherError,
  n: number,
  mode: TransportMode,
  era: Era | undefined,
): Promise<string | TetherError | undefined> {
  const o = rt.options;
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
    rt.events.emit({
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
    return toPublicError(error, { stage: failure.stage, phase: "discovery", redactor: rt.redactor });
  }
  return undefined;
}
