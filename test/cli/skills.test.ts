// `tether skills` and `tether skill` (S10, K1) through the built CLI, against a skills server on the
// official SDK: the listing; a verified skill written as a folder, byte for byte; and for every
// way a skill can lie, the error record, its exit status, and nothing written (no folder, no
// temporary left beside it).
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { runCli } from "../helpers/cli.ts";
import { sandboxFor } from "../sessions/sandbox.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/skills/server.mjs", import.meta.url));
const OTHER = fileURLToPath(new URL("../fixtures/extensions/server.mjs", import.meta.url));
const SERVER = ["--", process.execPath, FIXTURE];

const dir = mkdtempSync(join(tmpdir(), "tether-skills-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The error record of a failed run. */
function record(stderr: string): { code: string; reason: string; message: string } {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, stderr);
  return JSON.parse(lines[0]!);
}

describe("tether skills", () => {
  test("S10, K1: lists every skill, every page, as a table and as JSON", async () => {
    const plain = await runCli(["skills", ...SERVER]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stderr, "");
    const lines = plain.stdout.trim().split("\n");
    assert.match(lines[0]!, /^NAME\s+FILES\s+URI\s+DESCRIPTION$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/)[0]),
      ["git-workflow", "refunds", "bad-digest", "escape", "oversized", "liar", "frontmatter-lie", "dynamic"],
    );
    assert.match(
      plain.stdout,
      /git-workflow\s+3 \(215 B\)\s+skill:\/\/git-workflow\/SKILL\.md\s+Follow the team's Git conventions/,
    );
    assert.match(plain.stdout, /dynamic\s+dynamic\s+skill:\/\/dynamic\/SKILL\.md/);
    const json = await runCli(["skills", "--json", ...SERVER]);
    assert.equal(json.code, 0, json.stderr);
    const { skills } = JSON.parse(json.stdout) as { skills: { name: string; resources: unknown }[] };
    assert.equal(skills.length, 8);
    assert.equal(skills[1]!.name, "refunds");
    assert.equal(skills[7]!.resources, "dynamic");
  });

  test("S10: a server that does not declare the skills extension is an error record, exit 3", async () => {
    const run = await runCli(["skills", "--", process.execPath, OTHER]);
    assert.equal(run.code, 3);
    assert.equal(record(run.stderr).reason, "skills_not_offered");
  });
});

describe("tether skill", () => {
  test("S10, K1: writes a verified skill as a folder, byte for byte, and leaves nothing else", async () => {
    const out = join(dir, "git-workflow");
    const run = await runCli(["skill", "git-workflow", "-o", out, ...SERVER]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.equal(run.stdout, `git-workflow: 3 files, 215 bytes, verified, written to ${out}\n`);
    assert.match(readFileSync(join(out, "SKILL.md"), "utf8"), /^---\nname: git-workflow\n/);
    assert.equal(
      readFileSync(join(out, "references", "GUIDE.md"), "utf8"),
      "# Guide\n\nBranch from main; squash on merge.\n",
    );
    assert.deepEqual([...readFileSync(join(out, "assets", "logo.bin"))], [0, 1, 2, 255, 254, 10, 13, 0]);
    // Data, never executable.
    assert.equal(lstatSync(join(out, "SKILL.md")).mode & 0o111, 0);
    assert.deepEqual(readdirSync(dir), ["git-workflow"]);
    // By URI, into an empty folder that exists, with --json.
    const refunds = join(dir, "refunds");
    mkdirSync(refunds);
    const json = await runCli([
      "skill",
      "skill://acme/billing/refunds/SKILL.md",
      "-o",
      refunds,
      "--json",
      ...SERVER,
    ]);
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as {
      skill: { name: string };
      dir: string;
      files: { path: string; size: number; digest: string }[];
    };
    assert.equal(doc.skill.name, "refunds");
    assert.deepEqual(
      doc.files.map((f) => f.path),
      ["SKILL.md", "examples/email.md"],
    );
    assert.match(doc.files[1]!.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(readFileSync(join(refunds, "examples", "email.md"), "utf8"), "Dear customer,\n");
    rmSync(refunds, { recursive: true });
    rmSync(out, { recursive: true });
  });

  for (const [name, code, reason] of [
    ["bad-digest", 3, "skill_digest_mismatch"],
    ["escape", 3, "skill_path_refused"],
    ["oversized", 5, "skill_too_large"],
    ["liar", 5, "response_too_large"],
    ["frontmatter-lie", 3, "skill_frontmatter_mismatch"],
    ["dynamic", 3, "skill_unverifiable"],
    ["no-such-skill", 2, "unknown_skill"],
  ] as const)
    test(`S10: ${name}: exit ${code}, ${reason}, and nothing written`, async () => {
      const parent = mkdtempSync(join(dir, "case-"));
      const run = await runCli(["skill", name, "-o", join(parent, name), ...SERVER]);
      assert.equal(run.code, code, run.stderr);
      assert.equal(run.stdout, "");
      assert.equal(record(run.stderr).reason, reason);
      assert.deepEqual(readdirSync(parent), [], "no folder and no temporary left");
    });

  test("S10: -o is required; a folder that exists and is not empty, or is a link, is refused untouched", async () => {
    const missing = await runCli(["skill", "git-workflow", ...SERVER]);
    assert.equal(missing.code, 2);
    assert.equal(record(missing.stderr).reason, "invalid_args");
    const full = mkdtempSync(join(dir, "full-"));
    mkdirSync(join(full, "keep"));
    const exists = await runCli(["skill", "git-workflow", "-o", full, ...SERVER]);
    assert.equal(exists.code, 2);
    assert.equal(record(exists.stderr).reason, "output_exists");
    assert.deepEqual(readdirSync(full), ["keep"]);
    const target = mkdtempSync(join(dir, "target-"));
    const link = join(dir, "link");
    symlinkSync(target, link);
    const linked = await runCli(["skill", "git-workflow", "-o", link, ...SERVER]);
    assert.equal(linked.code, 2);
    assert.equal(record(linked.stderr).reason, "output_exists");
    assert.deepEqual(readdirSync(target), []);
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.ok(!existsSync(join(dir, "nowhere", "x")));
  });
});

test("S10: through a session (@NAME) the listing is the same, and a load is verified on the command's side", async (t) => {
  const box = sandboxFor(t);
  const start = await box.run(["session", "start", "sk", ...SERVER]);
  assert.equal(start.code, 0, start.stderr);
  try {
    const list = await box.run(["skills", "@sk", "--json"]);
    assert.equal(list.code, 0, list.stderr);
    assert.equal((JSON.parse(list.stdout) as { skills: unknown[] }).skills.length, 8);
    const out = join(box.dir, "refunds");
    const good = await box.run(["skill", "@sk", "refunds", "-o", out]);
    assert.equal(good.code, 0, good.stderr);
    assert.equal(readFileSync(join(out, "examples", "email.md"), "utf8"), "Dear customer,\n");
    const bad = await box.run(["skill", "@sk", "bad-digest", "-o", join(box.dir, "bad")]);
    assert.equal(bad.code, 3);
    assert.equal(record(bad.stderr).reason, "skill_digest_mismatch");
    assert.ok(!existsSync(join(box.dir, "bad")));
  } finally {
    const stop = await box.run(["session", "stop", "sk"]);
    assert.equal(stop.code, 0, stop.stderr);
  }
});
