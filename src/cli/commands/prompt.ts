/** `tether prompt`: one prompt, got with its arguments, its messages printed. */
import { configError } from "../../errors/failures.ts";
import { parseToolArgs } from "../args.ts";
import { type Command, stdinArgs } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderText } from "../render.ts";

export const command: Command = {
  name: "prompt",
  usage: "tether prompt <target> <name> [ARGS] [options]",
  summary: `Gets one prompt with its arguments and prints its messages.`,
  examples: `
tether prompt my-server greet name=Ada
tether prompt my-server greet --json name=Ada`,
  flags: [...OPERATION, "args-file"],
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    const [name, ...words] = ctx.rest;
    if (!name) throw configError("invalid_args", "prompt needs a prompt name");
    const { args } = parseToolArgs(words, inv.values["args-file"], await stdinArgs(inv, io));
    const stringArgs: Record<string, string> = {};
    for (const [k, val] of Object.entries(args))
      stringArgs[k] = typeof val === "string" ? val : JSON.stringify(val);
    const options = await ctx.build();
    const result = await ctx.open(options, (c) => c.getPrompt(name, stringArgs, { signal: io.signal }));
    io.stdout(json ? ctx.jsonOut(result) : renderText(redactor.redactDocument(result)));
    return 0;
  },
};
