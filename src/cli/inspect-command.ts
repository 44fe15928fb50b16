/**
 * `tether inspect`: starts the web explorer (src/inspect/) on the command's targets, or on the
 * servers of the config files and the live sessions, prints its URL, opens a browser, and holds
 * until Ctrl-C, which ends the explorer, its connections and every process they started.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Client } from "../client/api.ts";
import { configError } from "../errors/failures.ts";
import { asTetherError } from "../errors/tether-error.ts";
import { APPS_EXTENSIONS } from "../inspect/apps/resource.ts";
import type { ExplorerHost, ServerChoice } from "../inspect/connection.ts";
import { startExplorer } from "../inspect/server.ts";
import { tappedSpawn } from "../inspect/wire-tap.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";
import { sessionPlace } from "../sessions/folder.ts";
import { SessionLink } from "../sessions/link.ts";
import type { SessionInfo } from "../sessions/wire.ts";
import type { Context } from "./command.ts";
import { configEnvironment, listServers } from "./config.ts";
import { causes, hintFor, spawnProblem } from "./error-line.ts";
import { openUrl } from "./open-url.ts";
import { fitArguments } from "./schema-args.ts";
import { isSessionTarget } from "./session-target.ts";

/** How long the live sessions' listing may take before the page goes without it. */
const SESSION_LIST_MS = 2000;

/** The built page: beside the CLI bundle (dist/inspect-page), or the build's when run from the sources. */
export function pageDir(): string {
  for (const rel of ["../inspect-page/", "./inspect-page/", "../../dist/inspect-page/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}page.js`)) return dir;
  }
  throw configError("invalid_option", "the explorer's page is not built (run npm run build)");
}

/** `127.0.0.1`, `::1`, `localhost` and the rest of 127/8. */
const isLoopback = (address: string) =>
  address === "localhost" || address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);

export async function runInspect(ctx: Context): Promise<number> {
  const { inv, io } = ctx;
  const v = inv.values;
  const port = v.port === undefined ? 0 : Number(v.port);
  if (v.port !== undefined && (!/^\d+$/.test(v.port) || port > 65535))
    throw configError("invalid_option", "--port must be a whole number from 0 to 65535");
  const address = v.host ?? "127.0.0.1";
  if (!isLoopback(address) && !v["allow-remote"])
    throw configError(
      "invalid_option",
      `--host ${address} is not a loopback address: add --allow-remote to serve on it`,
    );
  const choices = await serverChoices(ctx);
  // A target on the command line is checked now: its mistakes are the command's, exit 2.
  for (const c of choices)
    if (c.source === "command line" && !isSessionTarget(c.target)) await ctx.connection(c.target);
  const byId = new Map(choices.map((c) => [c.id, c]));
  const host: ExplorerHost = {
    servers: () => choices,
    async connect(id, extras): Promise<Client> {
      const choice = byId.get(id)!;
      const { options } = await ctx.connection(choice.target);
      const full = {
        ...options,
        prefetchTools: true,
        handlers: extras.handlers,
        // --events still prints each connection's events on stderr (the terminal's stage line does not: several servers share it).
        onEvent: inv.values.events
          ? (e: LifecycleEvent) => {
              extras.onEvent(e);
              options.onEvent?.(e);
            }
          : extras.onEvent,
        signal: extras.signal,
        listen: true,
        // MCP Apps: the explorer renders ui:// resources, so servers may offer their apps.
        extensions: { ...options.extensions, ...APPS_EXTENSIONS },
      };
      if (isSessionTarget(choice.target))
        return (await import("./session-attach.ts")).attachSession(choice.target, full, io.env);
      if (full.command !== undefined) {
        ctx.spawned = full.command;
        // A stdio server's messages are read off the wire for the history.
        full.deps = { ...full.deps, spawn: tappedSpawn(extras.wire, full.deps?.spawn) };
      }
      return (await import("../connect/connect.ts")).connect(full);
    },
    checkArgs(tool, args) {
      fitArguments(tool, { args, plain: new Set() });
    },
    errorRecord(error) {
      const e = asTetherError(error, { stage: "config", phase: "discovery", redactor: ctx.redactor });
      const record: Record<string, unknown> = { ...e.recordFor(ctx.redactor) };
      const spawnFailure = e.stage === "spawn" ? spawnProblem(e, ctx.spawned) : undefined;
      if (spawnFailure) record.message = ctx.redactor.messageText(spawnFailure);
      // The page has no --debug: where there is a cause, the hint is that cause (redacted), as
      // --debug's hint line says it. An argument the page's form got wrong is said in the message.
      const cause = causes(e, ctx.redactor)[0];
      const hint = cause
        ? `cause: ${cause.name}${cause.code ? ` ${cause.code}` : ""}: ${cause.message}`
        : /_argument$/.test(e.reason)
          ? undefined
          : hintFor(e.code, "inspect");
      if (hint) record.hint = hint;
      return record;
    },
    redact: (value) => ctx.redactor.redactDocument(value),
  };
  const explorer = await startExplorer({ host, assetDir: pageDir(), address, port });
  try {
    (io.stdoutNow ?? io.stdout)(`${explorer.url}\n`);
    // The targets named on the command line connect while the browser opens the page.
    for (const c of choices) if (c.source === "command line") explorer.connect(c.id);
    if (!isLoopback(address))
      io.stderr(
        `warning: the explorer serves on ${address}: anyone who can reach it and holds the URL controls your servers\n`,
      );
    if (!v["no-open"] && !io.env.TETHER_NO_BROWSER) openUrl(explorer.url);
    const signal = io.signal;
    if (signal)
      await new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
  } finally {
    await explorer.close();
  }
  return 0;
}

type Choice = ServerChoice & { target: string | undefined };

/** The servers the sidebar lists: the command line's targets, or the config files' and the live sessions. */
async function serverChoices(ctx: Context): Promise<Choice[]> {
  const { inv, io } = ctx;
  if (inv.stdio) {
    const name = inv.stdio.join(" ");
    return [
      {
        id: "s1",
        name: ctx.redactor.redactSecrets(name),
        source: "command line",
        transport: "stdio",
        target: undefined,
      },
    ];
  }
  const targets = ctx.target === undefined ? [] : [ctx.target, ...ctx.rest];
  if (targets.length > 0)
    return targets.map((t, i) => ({
      id: `s${i + 1}`,
      name: ctx.redactor.redactSecrets(t),
      source: "command line",
      transport: isSessionTarget(t) ? "session" : /^https?:\/\//i.test(t) ? "http" : "config",
      target: t,
    }));
  const out: Choice[] = [];
  const listing = listServers(inv.values.config, configEnvironment(io.env));
  const seen = new Set<string>();
  for (const s of listing.servers) {
    if (seen.has(s.name)) continue;
    seen.add(s.name);
    out.push({
      id: `s${out.length + 1}`,
      name: s.name,
      source: s.source,
      transport: s.shape.transport,
      target: s.name,
    });
  }
  for (const s of await liveSessions(io.env))
    out.push({
      id: `s${out.length + 1}`,
      name: `@${s.name}`,
      source: "session",
      transport: s.transportMode,
      target: `@${s.name}`,
    });
  return out;
}

async function liveSessions(env: NodeJS.ProcessEnv): Promise<SessionInfo[]> {
  try {
    const link = await SessionLink.find(sessionPlace(env), AbortSignal.timeout(SESSION_LIST_MS));
    if (!link) return [];
    try {
      const answer = await link.ask({ op: "list" }, SESSION_LIST_MS);
      return "ok" in answer && Array.isArray(answer.ok) ? (answer.ok as unknown as SessionInfo[]) : [];
    } finally {
      link.close();
    }
  } catch {
    return [];
  }
}
