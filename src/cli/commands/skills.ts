/** `tether skills`: the server's skills (SEP-2640), entries only: no file is read. */
import { configError } from "../../errors/failures.ts";
import { SKILLS_EXTENSION } from "../../protocol/extensions.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { table } from "../render.ts";

export const command: Command = {
  name: "skills",
  usage: "tether skills <target> [options]",
  summary: `Lists the server's skills (SEP-2640): name, files (count and size, or "dynamic"), the URI of
each SKILL.md, description. Reads no skill file. --json prints {"skills":[...]}, each entry with
its front matter and files (uri, digest, size).`,
  examples: `
tether skills my-server
tether skills my-server --json`,
  flags: OPERATION,
  async run(ctx) {
    const { io, json, redactor } = ctx;
    if (ctx.rest.length > 0) throw configError("invalid_args", "skills takes only a target");
    const options = await ctx.build();
    const skills = await ctx.open(
      { ...options, extensions: { ...options.extensions, [SKILLS_EXTENSION]: {} } },
      (c) => c.listSkills({ signal: io.signal }),
    );
    if (json) {
      io.stdout(ctx.jsonOut({ skills }));
      return 0;
    }
    if (skills.length === 0) {
      io.stdout("(none)\n");
      return 0;
    }
    const shown = redactor.redactDocument(skills);
    const files = (r: (typeof skills)[number]["resources"]) =>
      r === "dynamic" ? "dynamic" : `${r.length} (${bytes(r.reduce((n, f) => n + f.size, 0))})`;
    io.stdout(
      table(
        ["NAME", "FILES", "URI", "DESCRIPTION"],
        shown.map((s) => [s.name, files(s.resources), s.uri, s.description]),
        ctx.style,
      ),
    );
    return 0;
  },
};

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
