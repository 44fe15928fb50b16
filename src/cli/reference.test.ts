// The help text, the completion scripts and docs/cli.md are checked against the one table of
// commands and options (flags.ts), so none of them can drift from what the CLI accepts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { completionScript } from "./completion.ts";
import { allFlags, COMMAND_FLAGS, extraFlags } from "./flags.ts";
import { COMMAND_NAMES, commandHelp, HELP } from "./help.ts";

const docs = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");

test("K1: every command is in --help, its own help, the completion scripts and docs/cli.md", () => {
  assert.deepEqual([...COMMAND_NAMES].sort(), Object.keys(COMMAND_FLAGS).sort());
  for (const shell of ["bash", "zsh", "fish"]) {
    const script = completionScript(shell);
    for (const command of COMMAND_NAMES) assert.ok(script.includes(command), `${shell}: ${command}`);
  }
  for (const command of COMMAND_NAMES) {
    assert.ok(HELP.includes(`tether ${command}`), `--help: ${command}`);
    assert.ok(commandHelp(command), `${command} --help`);
    assert.ok(docs.includes(`tether ${command}`), `docs/cli.md: ${command}`);
  }
});

test("K1: every option is in the completion scripts and docs/cli.md; each command's help names its own", () => {
  const bash = completionScript("bash");
  for (const flag of allFlags()) {
    assert.ok(bash.includes(`--${flag}`), `completion: --${flag}`);
    assert.ok(docs.includes(`--${flag}`), `docs/cli.md: --${flag}`);
  }
  for (const command of COMMAND_NAMES)
    for (const flag of extraFlags(command).filter((f) => f !== "config" && f !== "json"))
      assert.ok(commandHelp(command)!.includes(`--${flag}`), `${command} --help: --${flag}`);
});

test("K1: docs/cli.md never points outside the repository", () => {
  assert.ok(!/\.\.\/shared|shared\/CLI\.md/.test(docs));
});
