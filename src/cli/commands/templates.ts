/** `tether templates`: the server's resource templates. */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderTemplates } from "../render.ts";

export const command: Command = {
  name: "templates",
  usage: "tether templates <target> [options]",
  summary: `Lists the server's resource templates (URI templates, whole when piped).`,
  examples: `
tether templates my-server
tether templates my-server --json`,
  flags: OPERATION,
  async run(ctx) {
    const { io, json, redactor } = ctx;
    if (ctx.rest.length > 0) throw configError("invalid_args", "templates takes only a target");
    const options = await ctx.build();
    const resourceTemplates = await ctx.open(options, (c) => c.listResourceTemplates({ signal: io.signal }));
    io.stdout(
      json
        ? ctx.jsonOut({ resourceTemplates })
        : renderTemplates(redactor.redactDocument(resourceTemplates), ctx.style),
    );
    return 0;
  },
};
