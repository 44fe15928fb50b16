/** `tether shell`: an interactive prompt on one connection (shell.ts). */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";

export const command: Command = {
  name: "shell",
  usage: "tether shell <target|@name> [options]",
  summary: `An interactive prompt on one connection: tools, tool NAME, call NAME k=v, read URI,
prompt NAME k=v, templates, complete REF ARG=PARTIAL, watch (until Ctrl-C), help, exit. Tab completes commands,
tool names and argument names; server notifications print between prompts; history is kept in
the state folder.`,
  examples: `
tether shell @demo
tether shell -- node server.js`,
  flags: OPERATION,
  async run(ctx) {
    if (ctx.rest.length > 0) throw configError("invalid_args", "shell takes only a target");
    const options = { ...(await ctx.build()), listen: true };
    const { runShell } = await import("../shell.ts");
    const { io, redactor, style, json } = ctx;
    return await ctx.open(options, (c) => runShell(c, { io, redactor, style, json }));
  },
};
