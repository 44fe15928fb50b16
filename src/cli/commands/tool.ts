/** `tether tool`: one tool in full: description, annotations, input and output schema, an example call. */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { exampleArgs, renderTool } from "../render.ts";
import { findTool } from "../schema-args.ts";

export const command: Command = {
  name: "tool",
  usage: "tether tool <target> <name> [options]",
  summary: `Shows one tool: its signature, description, annotations (read-only, destructive, idempotent,
open-world), input and output schema, and an example call line (its required arguments, each
with an example value). --json prints the tool object as the server sent it. An unknown name is
refused with the closest ones suggested.`,
  examples: `
tether tool my-server get-sum
tether tool --json get-sum -- npx -y @modelcontextprotocol/server-everything`,
  flags: OPERATION,
  async run(ctx) {
    const { io, json, redactor } = ctx;
    const [name, ...extra] = ctx.rest;
    if (!name || extra.length > 0) throw configError("invalid_args", "tool needs exactly one tool name");
    const options = await ctx.build();
    const tools =
      ctx.logLevel === undefined
        ? await ctx.open({ ...options, prefetchTools: true }, async (c) => c.cachedTools ?? [])
        : await ctx.open(options, (c) => c.listTools({ signal: io.signal }));
    const tool = redactor.redactDocument(findTool(name, tools));
    if (json) {
      io.stdout(ctx.jsonOut(tool));
      return 0;
    }
    const example = ctx.commandFor("call", [tool.name, ...exampleArgs(tool)]);
    io.stdout(renderTool(tool, example, ctx.style));
    return 0;
  },
};
