/** `tether prompt`: one prompt, got with its arguments, its messages printed. */
import { configError } from "../../errors/failures.ts";
import { TetherError } from "../../errors/tether-error.ts";
import { parseToolArgs } from "../args.ts";
import { type Command, stdinArgs } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderText } from "../render.ts";
import { checkPromptArguments } from "../schema-args.ts";

export const command: Command = {
  name: "prompt",
  usage: "tether prompt <target> <name> [ARGS] [options]",
  summary: `Gets one prompt with its arguments and prints its messages. The arguments are checked against
the ones the prompt declares first (one prompts/list): an unknown argument name or a missing
required one is refused before prompts/get is sent, with the closest names suggested.`,
  examples: `
tether prompt my-server greet name=Ada
tether prompt my-server greet --json name=Ada`,
  flags: [...OPERATION, "args-file"],
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    const [name, ...words] = ctx.rest;
    if (!name) throw configError("invalid_args", "prompt needs a prompt name");
    ctx.argumentHint = `${ctx.commandFor("prompts", [])} lists each prompt's arguments`;
    const { args } = parseToolArgs(words, inv.values["args-file"], await stdinArgs(inv, io));
    const stringArgs: Record<string, string> = {};
    for (const [k, val] of Object.entries(args))
      stringArgs[k] = typeof val === "string" ? val : JSON.stringify(val);
    const options = await ctx.build();
    const result = await ctx.open(options, async (c) => {
      // One listing gives the declared arguments; nothing is sent until the given ones fit them.
      // A server that cannot list its prompts (a JSON-RPC error) leaves them unknown: the
      // arguments then go as written.
      const listed = await c.listPrompts({ signal: io.signal }).catch((error: unknown) => {
        if (error instanceof TetherError && error.code === "remote_error") return undefined;
        throw error;
      });
      // A prompt the listing does not name is asked for as written: the server decides.
      const prompt = listed?.find((p) => p.name === name);
      if (prompt) checkPromptArguments(prompt, stringArgs);
      return c.getPrompt(name, stringArgs, { signal: io.signal });
    });
    io.stdout(json ? ctx.jsonOut(result) : renderText(redactor.redactDocument(result)));
    return 0;
  },
};
