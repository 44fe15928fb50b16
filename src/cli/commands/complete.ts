/** `tether complete`: completion values for one argument of a prompt or a resource template. */
import type { CompletionRef } from "../../client/results.ts";
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderCompletion } from "../render.ts";

export const command: Command = {
  name: "complete",
  usage: "tether complete <target> <ref> <arg>=<partial> [<arg>=<value>...] [options]",
  summary: `Asks the server to complete one argument of a prompt (ref prompt:NAME) or of a resource
template (ref resource:URI-TEMPLATE). Prints one value a line; arguments already chosen may
follow as NAME=VALUE. With --json, the completion object (values, total, hasMore).`,
  examples: `
tether complete my-server prompt:greet name=A
tether complete my-server 'resource:demo://doc/{id}' id=1 --json`,
  flags: OPERATION,
  async run(ctx) {
    const { io, json, redactor } = ctx;
    const [refWord, argWord, ...contextWords] = ctx.rest;
    const ref = completionRef(refWord);
    const pair = argWord === undefined ? undefined : /^([^=]+)=(.*)$/s.exec(argWord);
    if (!pair)
      throw configError("invalid_args", "complete needs the argument being completed as NAME=PARTIAL");
    const context: Record<string, string> = {};
    for (const word of contextWords) {
      const c = /^([^=]+)=(.*)$/s.exec(word);
      if (!c) throw configError("invalid_args", "arguments already chosen are given as NAME=VALUE");
      context[c[1]!] = c[2]!;
    }
    const options = await ctx.build();
    const result = await ctx.open(options, (c) =>
      c.complete(
        ref,
        { name: pair[1]!, value: pair[2]! },
        contextWords.length ? { arguments: context } : undefined,
        { signal: io.signal },
      ),
    );
    io.stdout(
      json ? ctx.jsonOut(result.completion) : renderCompletion(redactor.redactDocument(result.completion)),
    );
    return 0;
  },
};

/** `prompt:NAME` or `resource:URI-TEMPLATE`, the thing whose argument is completed. */
function completionRef(word: string | undefined): CompletionRef {
  const m = word === undefined ? null : /^(prompt|resource):(.+)$/s.exec(word);
  if (!m)
    throw configError("invalid_args", "complete needs a reference: prompt:NAME or resource:URI-TEMPLATE");
  return m[1] === "prompt" ? { type: "ref/prompt", name: m[2]! } : { type: "ref/resource", uri: m[2]! };
}
