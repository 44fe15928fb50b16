import type { Client } from "../client/api.ts";
import { type ClientExtras, ConnectedClient } from "../client/client.ts";
import type { Established } from "../client/established.ts";
import type { Era, TransportMode } from "../errors/codes.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import type { Deadline } from "../lifecycle/deadline.ts";
import type { ResolvedTarget } from "../options/resolve.ts";
import { AttemptSessions } from "./attempt-sessions.ts";
import { Detection } from "./detection.ts";
import type { Runtime } from "./runtime.ts";
import { StageRunner } from "./stage-runner.ts";
import { TransientRetry } from "./transient-retry.ts";

/** The transport mode events name for a target: the one asked for (auto detection starts on Streamable HTTP). */
export function modeOf(target: ResolvedTarget): TransportMode {
  return target.kind === "stdio" ? "stdio" : target.transport === "sse" ? "sse" : "streamable-http";
}

/** What an attempt leaves behind for the recovery decision, whether it succeeded or not. */
export interface AttemptTrace {
  /** The era the attempt had evidence of, or was speaking when it failed (R3). */
  era?: Era;
}

/**
 * One attempt, from a fresh transport to a ready client (and its tools, when `prefetchTools` is
 * set), on the establishment deadline. It rejects with one TetherError, labelled where the
 * failure was first seen; every session it opened is closed first.
 */
export async function runAttempt(
  rt: Runtime,
  deadline: Deadline,
  n: number,
  trace: AttemptTrace,
  extras: Pick<ClientExtras, "validateOutput">,
): Promise<Client> {
  const { options: o, events } = rt;
  const mode = modeOf(o.target);
  events.emit({ type: "attempt_start", elapsedMs: deadline.elapsedMs(), mode, attempt: n });
  const sessions = new AttemptSessions(rt, deadline, n);
  const runner = new StageRunner(deadline, {
    events,
    redactor: rt.redactor,
    mode,
    attempt: n,
    entered: (stage) => sessions.entered(stage),
  });
  const detection = new Detection(
    rt,
    runner,
    sessions,
    new TransientRetry(o.transientRetries, deadline, o.clock),
  );
  let client: ConnectedClient | undefined;
  try {
    const established = await establish(detection, runner, sessions, n);
    client = new ConnectedClient(established, o, { ...extras, redactor: rt.redactor, attempts: n });
    if (o.prefetchTools) {
      // The establishment deadline's signal bounds the listing; the budget it reports is the whole one.
      await client.listTools({ signal: deadline.signal, timeoutMs: o.discovery.timeoutMs });
    }
    // The caller may have cancelled, or the deadline passed, just as the last stage succeeded (C4).
    if (deadline.signal.aborted) throw deadline.signal.reason;
    // C3: never a client whose transport is already known to be closed.
    if (established.session.closure) throw established.session.closure;
    established.session.transport.opened?.();
    events.emit({
      type: "attempt_end",
      ok: true,
      elapsedMs: deadline.elapsedMs(),
      mode: established.mode,
      attempt: n,
    });
    events.emit({
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
            stage: client && o.prefetchTools ? "list_tools" : runner.stage,
            phase: "discovery",
            redactor: rt.redactor,
          });
    trace.era = detection.era;
    if (client) await client.close();
    events.emit({
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
 * Detection and the handshake, up to an open session handed over to the client. A failure is
 * reported with the label it got where it was first seen, after every session the attempt
 * opened is closed.
 */
async function establish(
  detection: Detection,
  runner: StageRunner,
  sessions: AttemptSessions,
  n: number,
): Promise<Established> {
  try {
    const { session, negotiated } = await detection.run();
    sessions.handOver(session);
    return {
      ...negotiated,
      session,
      mode: session.transport.mode,
      stages: runner.timings,
      eraHint: detection.hintUse,
      attempt: n,
    };
  } catch (error) {
    const primary = runner.label(error);
    await sessions.disposeAll(primary);
    throw primary;
  }
}
