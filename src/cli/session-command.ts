/**
 * `tether session start|list|stop`, the `@NAME` target, and the hidden `session daemon` that the
 * first `session start` launches. What the command line knows (flags, config files, the user's
 * folders) is turned into plain connect options here; the daemon (src/sessions/) only holds
 * clients and forwards requests.
 */
import { configDir, FileTokenStore } from "../auth/token-store.ts";
import { configError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { LIMITS } from "../options/limits.ts";
import type { ConnectOptions } from "../options/options.ts";
import { runDaemon } from "../sessions/daemon.ts";
import { sessionPlace } from "../sessions/folder.ts";
import { DEFAULT_IDLE_TIMEOUT_MS, MAX_IDLE_TIMEOUT_MS } from "../sessions/idle.ts";
import { unanswered } from "../sessions/launch-errors.ts";
import { READY_LINE, SessionLink } from "../sessions/link.ts";
import { validSessionName } from "../sessions/names.ts";
import { errorFromWire, type SessionInfo, sessionClosedError } from "../sessions/wire.ts";
import { afresh, cacheDir, FileEraHints } from "./era-hint-file.ts";
import type { Io } from "./io.ts";
import { type Style, table } from "./render.ts";
import { fitCall } from "./schema-args.ts";
import { isSessionTarget, sessionName } from "./session-target.ts";

/** How long `session list` and `session stop` wait for the session process to answer. */
const ANSWER_MS = 10_000;

/** The options that travel to the daemon: plain data only (secrets included, in memory only). */
function specOf(
  options: ConnectOptions,
  env: NodeJS.ProcessEnv,
  fresh: boolean,
  redactor: Redactor,
): JsonObject {
  const o = options as ConnectOptions & Record<string, unknown>;
  const pick = (keys: string[]) =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
  const spec: Record<string, unknown> = pick([
    "url",
    "headers",
    "transport",
    "command",
    "args",
    "env",
    "cwd",
    "protocolVersion",
    "maxProtocolVersion",
    "timeoutMs",
    "maxResponseBytes",
    "maxFrameBytes",
    "discovery",
    "call",
    "probeTimeoutMs",
    "handshakeTimeoutMs",
    "recovery",
  ]);
  if (spec.url !== undefined) spec.url = String(spec.url);
  // A relative server path means what it means where the command was typed, not where the daemon runs.
  if (spec.command !== undefined && spec.cwd === undefined) spec.cwd = process.cwd();
  if (options.auth) {
    const { mode, grant, clientId, clientSecret, privateKeyJwk, scope } = options.auth;
    spec.auth = JSON.parse(JSON.stringify({ mode, grant, clientId, clientSecret, privateKeyJwk, scope }));
  }
  // The daemon uses the command's own folders for era hints and stored tokens.
  spec.folders = { cache: cacheDir(env), config: configDir(env) };
  spec.fresh = fresh;
  // Every secret this command knows (its environment's credentials, values a config file
  // expanded): the session process redacts what it hands back with them (S4).
  spec.secrets = [...redactor.secrets];
  return JSON.parse(JSON.stringify(spec)) as JsonObject;
}

/**
 * Connect options in the daemon from a start request's spec: the stores are the user's own files
 * again, the server-to-client stream is opened (a session hears notifications), and nothing asks
 * a person anything (the daemon has no terminal: OAuth sign-in happens beforehand with
 * `tether auth login`; elicitation and sampling are declined).
 */
export function daemonConnectOptions(spec: JsonObject): ConnectOptions {
  const folders = (spec.folders ?? {}) as { cache?: string; config?: string };
  const { folders: _f, fresh, auth, ...rest } = spec as Record<string, unknown>;
  const eraStore = new FileEraHints(folders.cache);
  const options = {
    ...rest,
    listen: true,
    serverStderr: rest.command !== undefined ? "ignore" : undefined,
    eraHints: fresh === true ? afresh(eraStore) : eraStore,
  } as Record<string, unknown>;
  if (auth && typeof auth === "object") {
    const a = auth as Record<string, unknown>;
    options.auth = {
      ...a,
      mode: a.grant === "client_credentials" ? a.mode : a.mode === "off" ? "off" : "stored-only",
      tokenStore: new FileTokenStore(folders.config),
    };
  }
  return options as unknown as ConnectOptions;
}

/** A target as `session list` shows it: no userinfo, query or fragment; secrets redacted. */
function targetLabel(options: ConnectOptions, given: string | undefined, redactor: Redactor): string {
  if (options.url !== undefined) {
    try {
      const u = new URL(String(options.url));
      return given && !/^https?:\/\//i.test(given) ? given : `${u.origin}${u.pathname}`;
    } catch {
      return "(url)";
    }
  }
  if (given !== undefined) return given;
  const words = [options.command ?? "", ...(options.args ?? [])].join(" ");
  return redactor.redactSecrets(`-- ${words}`).slice(0, 200);
}

export interface SessionCommand {
  positionals: string[];
  /** Connect options for a target, the way every command builds them. */
  build: (target: string | undefined) => Promise<ConnectOptions>;
  idleTimeout: string | undefined;
  fresh: boolean;
  json: boolean;
  events: ((e: LifecycleEvent) => void) | undefined;
  redactor: Redactor;
  io: Io;
  style: Style;
  /** Whether the target is a stdio command after `--`. */
  stdio: boolean;
}

/**
 * How to run this same CLI again with `args`: the runtime, its flags and the script; or, for a
 * single compiled binary (bun build --compile), whose script lives inside the binary under a
 * virtual path no other process can open, the binary alone.
 */
export function selfInvocation(args: string[]): { command: string; args: string[] } {
  const script = process.argv[1] ?? "";
  const embedded = script.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(script);
  if (embedded) return { command: process.execPath, args };
  return { command: process.execPath, args: [...process.execArgv, script, ...args] };
}

/** `tether session start|list|stop|daemon`. Returns the exit status. */
export async function runSession(c: SessionCommand): Promise<number> {
  const [sub, ...rest] = c.positionals;
  const place = sessionPlace(c.io.env);
  const out = (doc: unknown, human: string) =>
    c.io.stdout(c.json ? `${terminalJson(c.redactor.redactDocument(doc))}\n` : human);
  if (c.idleTimeout !== undefined && sub !== "start")
    throw configError("inapplicable_flag", "--idle-timeout applies to session start");
  switch (sub) {
    case "start": {
      const [name, target, ...extra] = rest;
      if (!name || !validSessionName(name))
        throw configError(
          "invalid_session_name",
          "session start needs a name: 1-64 letters, digits, '.', '_' or '-'",
        );
      if (extra.length > 0 || (target === undefined) !== c.stdio)
        throw configError("invalid_args", "session start takes a name and one target (or -- and a command)");
      if (isSessionTarget(target))
        throw configError("invalid_target", "a session's target cannot be another session");
      const idleTimeoutMs = idleTimeout(c.idleTimeout);
      const options = await c.build(target);
      // The session process has no terminal: a server's stderr would have nowhere to go.
      if (options.serverStderr === "inherit")
        throw configError("inapplicable_flag", "--server-stderr does not apply to session start");
      const spec = specOf(options, c.io.env, c.fresh, c.redactor);
      const link = await SessionLink.ensure(
        place,
        { ...selfInvocation(["session", "daemon"]), env: c.io.env },
        options.signal,
      );
      try {
        // The daemon's connect() has its own discovery deadline; this guard only outlasts it, for
        // a session process that stopped answering altogether.
        const within =
          (options.discovery?.timeoutMs ?? options.timeoutMs ?? LIMITS.timeoutMs.default) * 2 + ANSWER_MS;
        const info = await new Promise<SessionInfo>((resolve, reject) => {
          const onAbort = () => link.tell({ op: "cancel", target: id });
          const guard = setTimeout(() => {
            link.release(id);
            reject(unanswered(within));
          }, within);
          guard.unref();
          const id = link.request(
            { op: "start", name, spec, target: targetLabel(options, target, c.redactor), idleTimeoutMs },
            (f) => {
              if ("event" in f) c.events?.(f.event as unknown as LifecycleEvent);
              else if ("ok" in f || "error" in f || f.closed === true) {
                clearTimeout(guard);
                options.signal?.removeEventListener("abort", onAbort);
                if ("ok" in f) resolve(f.ok as unknown as SessionInfo);
                else if ("error" in f) reject(errorFromWire(f.error));
                else reject(sessionClosedError(name, "did not start: its session process went away"));
              }
            },
          );
          options.signal?.addEventListener("abort", onAbort, { once: true });
        });
        out(
          info,
          `${terminalLine(`session ${name} started: ${info.era} ${info.protocolVersion} over ${info.transportMode}; use @${name} as the target`)}\n`,
        );
        return 0;
      } finally {
        link.close();
      }
    }
    case "list": {
      if (rest.length > 0) throw configError("invalid_args", "session list takes no arguments");
      const link = await SessionLink.find(place);
      let sessions: SessionInfo[] = [];
      if (link) {
        const answer = await link.ask({ op: "list" }, ANSWER_MS);
        link.close();
        if ("error" in answer) throw errorFromWire(answer.error);
        sessions = Array.isArray(answer.ok) ? (answer.ok as unknown as SessionInfo[]) : [];
      }
      const now = Date.now();
      out(
        { sessions },
        sessions.length === 0
          ? "(no sessions)\n"
          : table(
              ["NAME", "TARGET", "ERA", "VERSION", "TRANSPORT", "AGE", "IDLE"],
              sessions.map((s) => [
                s.name,
                s.target,
                s.era,
                s.protocolVersion,
                s.transportMode,
                duration(now - s.startedAt),
                duration(s.idleMs),
              ]),
              c.style,
            ),
      );
      return 0;
    }
    case "stop": {
      const [name, ...extra] = rest;
      if (!name || extra.length > 0) throw configError("invalid_args", "session stop takes one session name");
      const bare = sessionName(name);
      const link = await SessionLink.find(place);
      if (!link) throw sessionClosedError(bare, "is not running (no session process)");
      const answer = await link.ask({ op: "stop", name: bare }, ANSWER_MS);
      link.close();
      if ("error" in answer) throw errorFromWire(answer.error);
      out({ stopped: bare }, `session ${bare} stopped\n`);
      return 0;
    }
    case "daemon": {
      // The background process itself: started by `session start`, never by hand.
      process.stdout.on("error", () => {});
      await runDaemon({
        place,
        connectOptions: daemonConnectOptions,
        // A call on @NAME is checked where the schema is held: one round trip, not three.
        checkArguments: fitCall,
        signal: c.io.signal,
        onReady: () => (c.io.stdoutNow ?? c.io.stdout)(`${READY_LINE} ${process.pid}\n`),
      });
      return 0;
    }
    default:
      throw configError("invalid_args", "session takes start, list or stop (see tether session --help)");
  }
}

function idleTimeout(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_IDLE_TIMEOUT_MS;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > MAX_IDLE_TIMEOUT_MS)
    throw configError(
      "invalid_limit",
      `--idle-timeout must be a whole number of ms from 1 to ${MAX_IDLE_TIMEOUT_MS}`,
    );
  return Number(raw.trim());
}

/** A short human duration: 45s, 12m, 3h. */
function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}
