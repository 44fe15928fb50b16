/** `tether types`: TypeScript declarations for the server's tools. */
import { configError } from "../../errors/failures.ts";
import { type Command, writeOutput } from "../command.ts";
import { OPERATION } from "../flag-table.ts";

export const command: Command = {
  name: "types",
  usage: "tether types <target> [-o FILE] [options]",
  summary: `Writes TypeScript declarations for the server's tools: <Tool>Input (the arguments), <Tool>Output
(the structuredContent, where the tool declares an output schema) and a Tools map from each
tool's name to both. Each Input goes to client.callTool as it is; typedTools<Tools>(client)
checks names, arguments and outputs at compile time. -o FILE writes them to FILE. --json prints
{declarations, tools} (with -o, only tools: each tool's type names).`,
  examples: `
tether types my-server -o my-server.d.ts
tether types --json -- node server.js`,
  flags: [...OPERATION, "output"],
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    if (ctx.rest.length > 0) throw configError("invalid_args", "types takes only a target");
    const options = await ctx.build();
    const tools = await ctx.open(options, (c) => c.listTools({ signal: io.signal }));
    const { toolTypes } = await import("../types-command.ts");
    const typed = await toolTypes(redactor.redactDocument(tools));
    // -o FILE takes the declarations; stdout then has nothing, or with --json the type names.
    const file = inv.values.output === "-" ? undefined : inv.values.output;
    if (file !== undefined) writeOutput(file, Buffer.from(typed.declarations, "utf8"), io);
    if (json) io.stdout(ctx.jsonOut(file === undefined ? typed : { tools: typed.tools }));
    else if (file === undefined) io.stdout(typed.declarations);
    return 0;
  },
};
