// A real terminal session through a pseudo-terminal (`script`): the table a person sees, with
// colour, recorded as a fixture; NO_COLOR removes the colour and --json is untouched by either.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN } from "../helpers/cli.ts";

const server = fileURLToPath(new URL("../../examples/servers/legacy-stdio.mjs", import.meta.url));
const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/tty/${name}`, import.meta.url)), "utf8");

function inTerminal(env: string, args: string): string {
  const command = `env ${env} ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} ${args} -- ${JSON.stringify(process.execPath)} ${JSON.stringify(server)}`;
  const out = execFileSync("script", ["-qc", command, "/dev/null"], { encoding: "utf8", timeout: 20_000 });
  // The stage line (stderr, shown when establishment takes a moment) erases itself with CR and
  // erase-line; the transcript keeps those bytes, so they are dropped before comparing.
  const erase = new RegExp(`${String.fromCharCode(27)}\\[K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] connecting: [^…]*…)?`, "g");
  return out.replace(/\r/g, "").replace(erase, "");
}

const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

test("K1: tools on a terminal prints the coloured table recorded in the fixture", {
  skip: !hasScript && "no script(1)",
}, () => {
  assert.equal(inTerminal("-u NO_COLOR", "tools"), fixture("tools.txt"));
});

test("K1: NO_COLOR removes the colour, and --json on a terminal is the same one document", {
  skip: !hasScript && "no script(1)",
}, () => {
  const plain = inTerminal("NO_COLOR=1", "tools");
  assert.equal(plain, fixture("tools-no-color.txt"));
  assert.ok(!plain.includes(`${String.fromCharCode(27)}[`));
  const json = inTerminal("-u NO_COLOR", "tools --json");
  const doc = JSON.parse(json) as { tools: { name: string }[] };
  assert.ok(doc.tools.some((t) => t.name === "echo"));
  assert.ok(!json.includes(`${String.fromCharCode(27)}[`));
});
