/** `tether session`: connections kept open in a background process (session-command.ts). */
import type { Command } from "../command.ts";
import { CONNECTION } from "../flag-table.ts";

export const command: Command = {
  name: "session",
  usage: "tether session start <name> <target> [--idle-timeout MS] [options] | list | stop <name>",
  summary: `Keeps a connection open in a per-user background process: start establishes it once (with every
connection option), then any command takes @name as its target and reuses it (no spawn, no
handshake; the session's state stays). A session ends on stop, after --idle-timeout MS without
use (default 1800000), or when its server goes away. list shows name, target, era, version,
transport, age and idle time.`,
  examples: `
tether session start demo -- npx -y @modelcontextprotocol/server-everything
tether call @demo echo message=hi
tether session list
tether session stop demo`,
  flags: [...CONNECTION, "idle-timeout"],
  async run(ctx) {
    const { inv } = ctx;
    return await (await import("../session-command.ts")).runSession({
      positionals: inv.positionals,
      build: async (t) => {
        const { options } = await ctx.connection(t);
        ctx.spawned = options.command;
        return options;
      },
      idleTimeout: inv.values["idle-timeout"],
      fresh: inv.values.fresh ?? false,
      json: ctx.json,
      events: ctx.events,
      redactor: ctx.redactor,
      io: ctx.io,
      style: ctx.style,
      stdio: inv.stdio !== undefined,
    });
  },
};
