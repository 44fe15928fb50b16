/**
 * `tether bridge`: the target served to a host, on our own stdin/stdout or (with --listen) over
 * HTTP. The connection to the target is built exactly as every other command builds it, so the
 * bridge carries the same budgets, ceilings, recovery, OAuth and redaction.
 */

import { listenHttp, parseListenAddress } from "../bridge/http-host.ts";
import { serveStdio } from "../bridge/stdio-host.ts";
import { configError, interruptError } from "../errors/failures.ts";
import { interruptOf } from "../errors/interrupt.ts";
import type { Redactor } from "../errors/redact.ts";
import type { ConnectOptions } from "../options/options.ts";
import { openInBrowser } from "./auth-command.ts";
import type { Io } from "./io.ts";
import { VERSION } from "./version.ts";

export interface BridgeInvocation {
  /** Positionals after the target (there should be none). */
  rest: string[];
  values: {
    listen?: string;
    "allow-remote"?: boolean;
    "listen-token-env"?: string;
    "idle-timeout"?: string;
    "stored-auth-only"?: boolean;
  };
}

const BRIDGE_INFO = { name: "tether-bridge", version: VERSION };

/**
 * A host starts the bridge without a terminal, so the one-shot commands' rule (sign in only where
 * a person is at a terminal) would always mean stored tokens only. The bridge signs in the way a
 * host's own server would: the authorization URL is opened in the browser (and written to stderr,
 * which hosts keep as the server's log), within the discovery budget. `--stored-auth-only` and
 * `--no-oauth` still hold.
 */
function withBrowserSignIn(
  options: ConnectOptions,
  values: BridgeInvocation["values"],
  io: Io,
): ConnectOptions {
  if (!("url" in options) || !options.auth || values["stored-auth-only"]) return options;
  const auth = options.auth;
  if (auth.mode !== "stored-only" || (auth.grant ?? "authorization_code") !== "authorization_code")
    return options;
  return {
    ...options,
    auth: {
      ...auth,
      mode: "interactive" as const,
      // A host gives the bridge no terminal, so the browser opens without one.
      openUrl: openInBrowser(io, "tether bridge", true),
    },
  };
}

/**
 * Runs the bridge until the host goes away (stdin ends), the listener is stopped (a signal), or
 * the bridge fails; a failure is thrown for the CLI to report as its one error record.
 */
export async function runBridge(
  inv: BridgeInvocation,
  io: Io,
  build: () => Promise<ConnectOptions>,
  redactor: Redactor,
): Promise<number> {
  if (inv.rest.length > 0) throw configError("invalid_args", "bridge takes only a target");
  const { listen } = inv.values;
  if (listen === undefined) {
    if (
      inv.values["allow-remote"] ||
      inv.values["listen-token-env"] !== undefined ||
      inv.values["idle-timeout"] !== undefined
    )
      throw configError(
        "inapplicable_flag",
        "--allow-remote, --listen-token-env and --idle-timeout apply only with --listen",
      );
    const connectOptions = withBrowserSignIn(await build(), inv.values, io);
    await serveStdio({
      connect: connectOptions,
      redactor,
      bridgeInfo: BRIDGE_INFO,
      input: process.stdin,
      output: process.stdout,
      signal: io.signal,
    });
    return endedBySignal(io);
  }
  const address = parseListenAddress(listen, inv.values["allow-remote"] === true);
  let token: string | undefined;
  const tokenEnv = inv.values["listen-token-env"];
  if (tokenEnv !== undefined) {
    token = io.env[tokenEnv];
    if (!token) throw configError("unset_variable", `--listen-token-env names ${tokenEnv}, which is not set`);
    redactor.learn([token]);
  }
  if (!address.loopback && token === undefined)
    throw configError(
      "missing_listen_token",
      "a non-loopback --listen address needs a bearer token from --listen-token-env",
    );
  const idle = inv.values["idle-timeout"];
  if (idle !== undefined && (!/^\d+$/.test(idle) || Number(idle) < 1 || Number(idle) > 86_400_000))
    throw configError("invalid_limit", "--idle-timeout must be a whole number of ms from 1 to 86400000");
  const connectOptions = withBrowserSignIn(await build(), inv.values, io);
  await listenHttp({
    idleMs: idle === undefined ? undefined : Number(idle),
    connect: connectOptions,
    redactor,
    bridgeInfo: BRIDGE_INFO,
    address,
    token,
    signal: io.signal,
    onListening: (urls) => (io.stdoutNow ?? io.stdout)(`${JSON.stringify({ listening: urls })}\n`),
  });
  return endedBySignal(io);
}

/**
 * The bridge's status once it has closed in order: 0 when its host went away (stdin ended), and
 * for a signal (SIGINT, SIGTERM, SIGHUP) what every command reports for one: `cancelled`, 130.
 */
function endedBySignal(io: Io): number {
  const interrupt = interruptOf(io.signal);
  if (interrupt) throw interruptError(interrupt, { stage: "close", phase: "call" });
  return 0;
}
