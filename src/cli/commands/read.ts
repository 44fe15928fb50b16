/** `tether read`: one resource, its text printed or its bytes written where asked. */
import { configError, protocolError } from "../../errors/failures.ts";
import type { JsonObject } from "../../jsonrpc/messages.ts";
import { type Command, writeOutput } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { renderText } from "../render.ts";

export const command: Command = {
  name: "read",
  usage: "tether read <target> <uri> [options]",
  summary: `Reads one resource and prints its text. Binary contents are named, not printed (on a terminal with
their MIME type and decoded size), unless asked: -o, --output FILE writes the first content's
bytes to FILE (- for stdout); --json prints the whole result.`,
  examples: `
tether read my-server demo://greeting
tether read my-server demo://logo.png -o logo.png
tether read demo://doc --json -- npx -y @modelcontextprotocol/server-everything`,
  flags: [...OPERATION, "output"],
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    const [uri, ...extra] = ctx.rest;
    if (!uri || extra.length > 0) throw configError("invalid_args", "read needs exactly one resource URI");
    const options = await ctx.build();
    const result = await ctx.open(options, (c) => c.readResource(uri, { signal: io.signal }));
    if (inv.values.output !== undefined) {
      // Binary contents are written only when asked: decoded, to a file or (with -) to stdout,
      // byte for byte as the server sent them (neither sanitized nor redacted: the user asked for the bytes).
      writeOutput(inv.values.output, resourceBytes(result), io);
      return 0;
    }
    io.stdout(json ? ctx.jsonOut(result) : renderText(redactor.redactDocument(result), io.isTty));
    return 0;
  },
};

/** The first content of a resource read as bytes: a blob decoded from base64, or text as UTF-8. */
function resourceBytes(result: JsonObject): Uint8Array {
  const contents = Array.isArray(result.contents) ? result.contents : [];
  const first = contents[0];
  if (typeof first === "object" && first !== null && !Array.isArray(first)) {
    if (typeof first.blob === "string") return Buffer.from(first.blob, "base64");
    if (typeof first.text === "string") return Buffer.from(first.text, "utf8");
  }
  throw protocolError(
    { stage: "call", phase: "call" },
    "malformed_result",
    "the resource read returned no contents",
  );
}
