/**
 * `tether call @NAME TOOL ARGS` as one request on the session socket: the session process lists
 * the tools from its cache, fits the arguments to the schema it holds, and calls, so the command
 * pays one round trip where it paid three (the session's info, the listing, the call). Budgets,
 * ceilings, progress, cancellation and errors are those of the same call through RemoteClient.
 */
import type { CallOptions, Progress } from "../client/api.ts";
import type { CallToolResult } from "../client/results.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { LIMITS } from "../options/limits.ts";
import { replyFrameCeiling } from "./frames.ts";
import { cancelled, LOCAL_GRACE_MS, stuck, unanswered } from "./launch-errors.ts";
import type { SessionLink } from "./link.ts";
import type { CommandBudgets } from "./remote-client.ts";
import { answerError, daemonGone } from "./wire.ts";

export interface SessionToolCall {
  session: string;
  tool: string;
  /** The arguments as the command read them; `plain` keys came as `key=value` text. */
  args: JsonObject;
  plain: ReadonlySet<string>;
  /** The command's budgets and ceilings by phase (unset: the session's). */
  budgets: CommandBudgets;
  /** The call's own options, as `callTool` takes them (a RemoteClient forwards the same). */
  options: Pick<
    CallOptions,
    "timeoutMs" | "resetTimeoutOnProgress" | "maxTotalTimeoutMs" | "signal" | "onProgress"
  >;
}

/** Runs the call in the session; rejects with the error the same call one-shot would. */
export function callOnSession(link: SessionLink, c: SessionToolCall): Promise<CallToolResult> {
  const b = c.budgets;
  const { signal, resetTimeoutOnProgress: reset, maxTotalTimeoutMs, onProgress } = c.options;
  const timeoutMs = c.options.timeoutMs ?? b.callTimeoutMs;
  return new Promise<CallToolResult>((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled(signal.reason));
    let guard: NodeJS.Timeout | undefined;
    let calling = false;
    let progressSeen = 0;
    const arm = (ms: number, error: () => Error) => {
      if (guard) clearTimeout(guard);
      guard = setTimeout(() => finish(() => reject(error())), ms);
      guard.unref();
    };
    const finish = (fn: () => void) => {
      link.release(id);
      signal?.removeEventListener("abort", onAbort);
      if (guard) clearTimeout(guard);
      fn();
    };
    const id = link.request(
      {
        op: "tool",
        session: c.session,
        tool: c.tool,
        args: c.args,
        plain: [...c.plain],
        options: {
          timeoutMs,
          maxResponseBytes: b.callMaxBytes,
          resetTimeoutOnProgress: reset,
          maxTotalTimeoutMs,
          discoveryTimeoutMs: b.discoveryTimeoutMs,
          discoveryMaxBytes: b.discoveryMaxBytes,
          progress: onProgress !== undefined,
        },
      },
      (f) => {
        if ("progress" in f) {
          progressSeen++;
          try {
            onProgress?.(f.progress as unknown as Progress);
          } catch {
            // The callback's failure is its own.
          }
        } else if ("calling" in f) {
          // The call is about to leave: its reply may be as large as its ceiling, and a daemon
          // that stops answering now cannot hold the command much past the call's budget.
          calling = true;
          const session = (f.calling ?? {}) as { callTimeoutMs?: number; callMaxBytes?: number };
          link.allowFrames(replyFrameCeiling(b.callMaxBytes ?? session.callMaxBytes ?? 0));
          const budget = maxTotalTimeoutMs ?? timeoutMs ?? session.callTimeoutMs ?? LIMITS.timeoutMs.default;
          if (!signal?.aborted)
            arm((reset && !maxTotalTimeoutMs ? 10 : 1) * budget + LOCAL_GRACE_MS, () => stuck(budget));
        } else if ("ok" in f) finish(() => resolve(f.ok as unknown as CallToolResult));
        else if ("error" in f) finish(() => reject(answerError(f.error, progressSeen)));
        else if (f.closed === true) finish(() => reject(daemonGone(c.session, calling)));
      },
    );
    // Until the call leaves, the wait is the one a command attaching to the session has.
    const first = (b.callTimeoutMs ?? b.discoveryTimeoutMs ?? LIMITS.timeoutMs.default) + LOCAL_GRACE_MS;
    arm(first, () => unanswered(first));
    // The cancel goes to the daemon, whose client tells the server; its answer (cancelled)
    // settles the call, or the local grace does.
    const onAbort = () => {
      link.tell({ op: "cancel", target: id });
      arm(LOCAL_GRACE_MS, () => cancelled(signal?.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
