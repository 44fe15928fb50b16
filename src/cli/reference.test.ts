// The help text, the completion scripts and docs/cli.md are checked against the one table of
// commands (commands/table.ts) and the one table of options (flag-table.ts), so none of them can
// drift from what the CLI accepts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { allCommands, COMMAND_NAMES } from "./commands/table.ts";
import { completionScript } from "./completion.ts";
import { allFlags, CONNECTION, extraFlags } from "./flag-table.ts";
import { commandHelp, HELP } from "./help.ts";

const docs = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");

test("K1: every command is in --help, its own help, the completion scripts and docs/cli.md", async () => {
  const commands = await allCommands();
  assert.deepEqual(
    commands.map((c) => c.name),
    COMMAND_NAMES,
  );
  for (const shell of ["bash", "zsh", "fish"]) {
    const script = completionScript(shell, COMMAND_NAMES);
    for (const command of COMMAND_NAMES) assert.ok(script.includes(command), `${shell}: ${command}`);
  }
  for (const command of commands) {
    assert.ok(HELP.includes(`tether ${command.name} `), `--help: ${command.name}`);
    assert.ok(commandHelp(command).startsWith(`Usage: tether ${command.name}`), `${command.name} --help`);
    assert.ok(docs.includes(`tether ${command.name} `), `docs/cli.md: ${command.name}`);
  }
});

test("K1: every option is in the completion scripts and docs/cli.md; each command's help names its own", async () => {
  const bash = completionScript("bash", COMMAND_NAMES);
  for (const flag of allFlags()) {
    assert.ok(bash.includes(`--${flag}`), `completion: --${flag}`);
    assert.ok(docs.includes(`--${flag}`), `docs/cli.md: --${flag}`);
  }
  for (const flag of CONNECTION) assert.ok(HELP.includes(`--${flag}`), `--help: --${flag}`);
  for (const command of await allCommands())
    for (const flag of extraFlags(command.flags).filter((f) => f !== "config" && f !== "json"))
      assert.ok(commandHelp(command).includes(`--${flag}`), `${command.name} --help: --${flag}`);
});

test("K1: docs/cli.md never points outside the repository", () => {
  assert.ok(!/\.\.\/shared|shared\/CLI\.md/.test(docs));
});
