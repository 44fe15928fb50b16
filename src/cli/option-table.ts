/**
 * docs/cli.md's option table, derived from the flag table and the commands that take each flag
 * (test/cli/option-table.test.ts checks the document against it). Not loaded by the CLI.
 */
import type { Command } from "./command.ts";
import { allFlags, type FlagSpec, flagSpec } from "./flag-table.ts";

const code = (text: string) => `\`${text.replace(/\|/g, "\\|")}\``;

/** The table's lines, header first: one row a documented flag, in the flag table's order. */
export function optionTable(commands: readonly Pick<Command, "name" | "flags">[]): string[] {
  const connecting = commands.filter((c) => c.flags.includes("transport"));
  const rows = ["| option | commands | meaning |", "| --- | --- | --- |"];
  for (const name of allFlags()) {
    const f: FlagSpec = flagSpec(name)!;
    if (f.about === undefined) continue;
    const aliases = allFlags().filter((a) => flagSpec(a)!.alias === name);
    const option = `${code(`${f.short ? `-${f.short}, ` : ""}--${name}${f.value ? ` ${f.value}` : ""}`)}${aliases
      .map((a) => ` (alias ${code(`--${a}`)})`)
      .join("")}`;
    const takers = commands.filter((c) => c.flags.includes(name));
    const others = takers.filter((c) => !connecting.includes(c)).map((c) => code(c.name));
    const where =
      f.scope === "everywhere"
        ? "all"
        : connecting.every((c) => takers.includes(c))
          ? ["all that connect", ...others].join(", ")
          : takers.map((c) => code(c.name)).join(", ");
    rows.push(`| ${option} | ${where} | ${f.about} |`);
  }
  return rows;
}
