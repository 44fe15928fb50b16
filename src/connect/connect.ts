import { Client } from "../client/client.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import { callerSignal } from "../lifecycle/abort.ts";
import { Deadline } from "../lifecycle/deadline.ts";
import type { ConnectOptions } from "../options/options.ts";
import { resolveOptions } from "../options/resolve.ts";
import { Attempt } from "./establish.ts";

/**
 * Establishes a client: one deadline (the discovery phase's time budget) from before any I/O to
 * a ready client, tool listing included when `prefetchTools` is set. Rejects with a TetherError;
 * never returns a client whose transport is already closed, and never one whose caller cancelled.
 */
export async function connect(options: ConnectOptions): Promise<Client> {
  const o = resolveOptions(options);
  const caller = callerSignal(options.signal);
  const deadline = new Deadline(o.clock, o.discovery.timeoutMs, caller.signal);
  const mode = o.target.kind === "stdio" ? "stdio" : o.target.transport === "sse" ? "sse" : "streamable-http";
  o.events.emit({ type: "attempt_start", elapsedMs: 0, mode, attempt: 1 });
  const attempt = new Attempt(o, deadline, 1);
  let client: Client | undefined;
  try {
    const established = await attempt.run();
    client = new Client(established, o);
    if (o.prefetchTools)
      await client.listTools({
        signal: deadline.signal,
        timeoutMs: Math.max(1, Math.ceil(deadline.remainingMs())),
      });
    // The caller may have cancelled, or the deadline passed, just as the last stage succeeded.
    if (deadline.signal.aborted) throw deadline.signal.reason;
    if (established.session.closure) throw established.session.closure;
    o.events.emit({
      type: "attempt_end",
      ok: true,
      elapsedMs: deadline.elapsedMs(),
      mode: established.mode,
      attempt: 1,
    });
    o.events.emit({
      type: "established",
      era: established.era,
      protocolVersion: established.protocolVersion,
      elapsedMs: deadline.elapsedMs(),
      mode: established.mode,
      attempt: 1,
    });
    return client;
  } catch (error) {
    const primary =
      error instanceof TetherError
        ? error
        : toPublicError(error, {
            stage: client ? "list_tools" : attempt.stage,
            phase: "discovery",
            redactor: o.redactor,
          });
    if (client) await client.close();
    o.events.emit({
      type: "attempt_end",
      ok: false,
      code: primary.code,
      reason: primary.reason,
      stage: primary.stage,
      elapsedMs: deadline.elapsedMs(),
      mode,
      attempt: 1,
    });
    throw primary;
  } finally {
    deadline.dispose();
    caller.dispose();
  }
}
