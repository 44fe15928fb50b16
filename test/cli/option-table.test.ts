// docs/cli.md's option table is the flag table as a reader sees it: every row is derived from
// src/cli/flag-table.ts and the commands that take each flag, so the document can neither miss a
// flag nor name one the CLI refuses, nor say a flag applies where it does not.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { allCommands } from "../../src/cli/commands/table.ts";
import { optionTable } from "../../src/cli/option-table.ts";

const docs = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8").split("\n");

test("K1: docs/cli.md's option table is the one derived from the flag table", async () => {
  const expected = optionTable(await allCommands());
  const start = docs.indexOf(expected[0]!);
  assert.ok(start >= 0, `docs/cli.md has a table headed ${expected[0]}`);
  let end = start;
  while (docs[end]?.startsWith("|")) end++;
  assert.deepEqual(
    docs.slice(start, end),
    expected,
    `docs/cli.md's option table differs from the flag table; it should read:\n${expected.join("\n")}`,
  );
});

test("K1: the derived option table has a row for every flag a command takes, but --help and --version", async () => {
  const commands = await allCommands();
  const table = optionTable(commands).join("\n");
  for (const flag of new Set(commands.flatMap((c) => c.flags)))
    assert.ok(table.includes(`--${flag}`), `--${flag} has a row`);
  assert.ok(table.includes("`--debug` | all |"));
});
