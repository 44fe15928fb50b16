/** `tether skill`: one skill, verified file by file, written as a folder (SEP-2640). */
import { configError } from "../../errors/failures.ts";
import { terminalLine } from "../../errors/terminal-text.ts";
import { SKILLS_EXTENSION } from "../../protocol/extensions.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { writeSkillFolder } from "../skill-folder.ts";

export const command: Command = {
  name: "skill",
  usage: "tether skill <target> <name> -o DIR [options]",
  summary: `Fetches one skill (by name, or by the URI of its SKILL.md) and writes it to the folder DIR, which
must not exist (or be empty). Every file is checked against the skill's entry first (size,
SHA-256 digest, SKILL.md's front matter), every path confined to DIR, 16 MiB in all at most; on
any mismatch nothing is written. Files are written as data, never executable. --json prints
{"skill":{...},"dir":DIR,"files":[{"path","size","digest"}]}.`,
  examples: `
tether skill my-server git-workflow -o ./skills/git-workflow
tether skill my-server skill://acme/billing/refunds/SKILL.md -o refunds --json`,
  flags: [...OPERATION, "output"],
  async run(ctx) {
    const { inv, io, json } = ctx;
    const [name, ...extra] = ctx.rest;
    if (!name || extra.length > 0)
      throw configError("invalid_args", "skill needs exactly one skill name or URI");
    const dir = inv.values.output;
    if (dir === undefined || dir === "" || dir === "-")
      throw configError("invalid_args", "skill needs -o DIR, the folder to write the skill into");
    const options = await ctx.build();
    const loaded = await ctx.open(
      { ...options, extensions: { ...options.extensions, [SKILLS_EXTENSION]: {} } },
      (c) => c.loadSkill(name, { signal: io.signal }),
    );
    const written = writeSkillFolder(dir, loaded.files);
    const digests = new Map(
      (loaded.skill.resources === "dynamic" ? [] : loaded.skill.resources).map((f) => [f.uri, f.digest]),
    );
    if (json)
      io.stdout(
        ctx.jsonOut({
          skill: loaded.skill,
          dir,
          files: loaded.files.map((f) => ({
            path: f.path,
            size: f.bytes.byteLength,
            digest: digests.get(f.uri),
          })),
        }),
      );
    else
      io.stdout(
        `${terminalLine(loaded.skill.name)}: ${loaded.files.length} files, ${written} bytes, verified, written to ${terminalLine(dir)}\n`,
      );
    return 0;
  },
};
