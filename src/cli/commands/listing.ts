/** What `resources` and `prompts` share: list every page of one kind, print it. */
import { configError } from "../../errors/failures.ts";
import type { JsonObject } from "../../jsonrpc/messages.ts";
import type { Context } from "../command.ts";
import { renderList } from "../render.ts";

export async function listing(ctx: Context, kind: "resources" | "prompts"): Promise<number> {
  if (ctx.rest.length > 0) throw configError("invalid_args", `${kind} takes only a target`);
  const options = await ctx.build();
  const items = await ctx.open<JsonObject[]>(options, (c) =>
    kind === "resources" ? c.listResources() : c.listPrompts(),
  );
  ctx.io.stdout(
    ctx.json
      ? ctx.jsonOut({ [kind]: items })
      : renderList(ctx.redactor.redactDocument(items), kind === "resources" ? "uri" : "name", ctx.style),
  );
  return 0;
}
