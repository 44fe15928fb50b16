// A skill folder is written whole or not at all, and only inside itself (S10): a path that could
// leave it or that no file system writes as it is fails the write before anything lands, and the
// temporary folder beside it is removed.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { LoadedSkillFile } from "../client/results.ts";
import { TetherError } from "../errors/tether-error.ts";
import { writeSkillFolder } from "./skill-folder.ts";

const root = mkdtempSync(join(tmpdir(), "tether-skill-folder-"));
after(() => rmSync(root, { recursive: true, force: true }));

const file = (path: string, text = "x"): LoadedSkillFile => ({
  path,
  uri: `skill://demo/${path}`,
  bytes: new TextEncoder().encode(text),
});

test("S10: hostile paths fail the write, and nothing is left, not even the temporary folder", () => {
  for (const bad of [
    "../escape.md",
    "a/../../escape.md",
    "/etc/passwd",
    "a//b",
    "./x",
    "a\\b",
    "nul\u0000.md",
    "c:x",
    `${"n".repeat(256)}.md`,
    "",
  ]) {
    const parent = mkdtempSync(join(root, "p-"));
    assert.throws(
      () => writeSkillFolder(join(parent, "demo"), [file("SKILL.md"), file("ok.md"), file(bad)]),
      (e: unknown) => e instanceof TetherError && e.code === "config" && e.reason === "invalid_output",
      JSON.stringify(bad),
    );
    assert.deepEqual(readdirSync(parent), [], JSON.stringify(bad));
  }
});

test("S10: a file listed twice fails the write whole; a sound skill lands as one folder", () => {
  const parent = mkdtempSync(join(root, "p-"));
  assert.throws(() => writeSkillFolder(join(parent, "demo"), [file("SKILL.md"), file("a.md"), file("a.md")]));
  assert.deepEqual(readdirSync(parent), []);
  const written = writeSkillFolder(join(parent, "demo"), [
    file("SKILL.md", "hello"),
    file("refs/a.md", "abc"),
  ]);
  assert.equal(written, 8);
  assert.deepEqual(readdirSync(parent), ["demo"]);
  assert.equal(readFileSync(join(parent, "demo", "refs", "a.md"), "utf8"), "abc");
});
