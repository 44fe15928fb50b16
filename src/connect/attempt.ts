import type { Client } from "../client/api.ts";
import { type ClientExtras, ConnectedClient } from "../client/client.ts";
import type { Established } from "../client/established.ts";
import { classifyFailure } from "../errors/classify.ts";
import type { Era, TransportMode } from "../errors/codes.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import type { Deadline } from "../lifecycle/deadline.ts";
import type { ResolvedTarget } from "../options/resolve.ts";
import { AttemptSessions, httpTransportsFor } from "./attempt-sessions.ts";
import { Detection } from "./detection.ts";
import type { Runtime } from "./runtime.ts";
import { StageRunner } from "./stage-runner.ts";
import type { TransientRetry } from "./transient-retry.ts";

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
  /** The establishment's one allowance of transient-retry waits, shared by every attempt (R7). */
  transient: TransientRetry,
): Promise<Client> {
  const { options: o, events } = rt;
  const mode = modeOf(o.target);
  events.emit({ type: "attempt_start", elapsedMs: deadline.elapsedMs(), mode, attempt: n });
  const sessions = new AttemptSessions(rt, deadline, n, await httpTransportsFor(o.target));
  const runner = new StageRunner(deadline, {
    events,
    redactor: rt.redactor,
    mode,
    attempt: n,
    entered: (stage) => sessions.entered(stage),
  });
  const detection = new Detection(rt, runner, sessions, transient);
  let client: ConnectedClient | undefined;
  try {
    let established = await establish(detection, runner, sessions, n);
    client = new ConnectedClient(established, o, {
      ...extras,
      redactor: rt.redactor,
      attempts: n,
      tracing: rt.tracing,
    });
    if (o.prefetchTools) {
      // The establishment deadline's signal bounds the listing; the budget it reports is the whole one.
      const list = (c: ConnectedClient) =>
        c.listTools({ signal: deadline.signal, timeoutMs: o.discovery.timeoutMs });
      try {
        await list(client);
      } catch (error) {
        // On a stored discover result the listing is the server's first word: if it disagrees
        // (another era or version, a dropped connection), the result goes and detection runs
        // afresh, inside the same deadline. Any other failure stands.
        if (!detection.adoptedDiscover || !disagrees(error)) throw error;
        detection.dropAdopted();
        const stale = client;
        client = undefined;
        await stale.close();
        established = await establish(detection, runner, sessions, n);
        client = new ConnectedClient(established, o, {
          ...extras,
          redactor: rt.redactor,
          attempts: n,
          tracing: rt.tracing,
        });
        await list(client);
      }
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
 * Whether the listing's failure, on a stored discover result, says the server is not what was
 * stored: another era or version (a JSON-RPC refusal, 400/404/405, a protocol violation) or a
 * dropped connection. Time, ceilings, credentials, throttling and cancellation say nothing of it.
 */
function disagrees(error: unknown): boolean {
  if (classifyFailure(error).disprovesHint) return true;
  if (!(error instanceof TetherError) || error.security) return false;
  return (
    error.code === "remote_error" ||
    error.code === "protocol" ||
    (error.httpStatus !== undefined && [400, 404, 405].includes(error.httpStatus))
  );
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
