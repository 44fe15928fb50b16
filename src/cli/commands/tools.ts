/** `tether tools`: the server's tools, each with a compact signature of its input schema. */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderTools } from "../render.ts";

export const command: Command = {
  name: "tools",
  usage: "tether tools <target> [options]",
  summary: `Lists the server's tools (every page), each with a compact signature of its input schema.`,
  examples: `
tether tools http://127.0.0.1:3000/mcp
tether tools --json -- node server.js
tether tools my-server --config ./.mcp.json`,
  flags: OPERATION,
  async run(ctx) {
    const { io, json, redactor } = ctx;
    if (ctx.rest.length > 0) throw configError("invalid_args", "tools takes only a target");
    const options = await ctx.build();
    // With --log-level the tools are listed after the level is set, so the listing's logs are heard.
    const tools =
      ctx.logLevel === undefined
        ? await ctx.open({ ...options, prefetchTools: true }, async (c) => c.cachedTools ?? [])
        : await ctx.open(options, (c) => c.listTools({ signal: io.signal }));
    io.stdout(json ? ctx.jsonOut({ tools }) : renderTools(redactor.redactDocument(tools), ctx.style));
    return 0;
  },
};
