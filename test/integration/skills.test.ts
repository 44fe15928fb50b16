// Skills (SEP-2640, S10) against a server on the official SDK that serves two honest skills and
// several that lie: listing reads every page and no file; loading hands over a skill only once
// every file matched its entry, and refuses a wrong digest, a path out of the skill's folder, an
// oversized skill, a file larger than declared, a front matter that differs and a dynamic skill.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  type Client,
  type ConnectOptions,
  connect,
  type ProtocolVersion,
  SKILLS_EXTENSION,
  TetherError,
} from "../../src/index.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/skills/server.mjs", import.meta.url));
const OTHER = fileURLToPath(new URL("../fixtures/extensions/server.mjs", import.meta.url));

const options = (version: ProtocolVersion, args = [FIXTURE]): ConnectOptions => ({
  command: process.execPath,
  args,
  eraHints: false,
  timeoutMs: 20_000,
  protocolVersion: version,
  extensions: { [SKILLS_EXTENSION]: {} },
});

const reads = async (client: Client) =>
  Number(((await client.callTool("reads", {})).content[0] as { text: string }).text);

const NAMES = [
  "git-workflow",
  "refunds",
  "bad-digest",
  "escape",
  "oversized",
  "liar",
  "frontmatter-lie",
  "dynamic",
];

function refusal(code: string, reason: string, message?: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof TetherError, String(e));
    assert.equal(`${e.code}/${e.reason}`, `${code}/${reason}`, e.message);
    if (message) assert.match(e.message, message);
    return true;
  };
}

for (const version of ["2026-07-28", "2025-11-25"] as ProtocolVersion[]) {
  describe(`skills in ${version} (S10)`, () => {
    let client: Client;
    before(async () => {
      client = await connect(options(version));
    });
    after(() => client.close());

    test("S10: listSkills follows every page and reads no file", async () => {
      assert.deepEqual({ ...client.serverExtensions }, { [SKILLS_EXTENSION]: {} });
      const skills = await client.listSkills();
      assert.deepEqual(
        skills.map((s) => s.name),
        NAMES,
      );
      const first = await client.listSkillsPage();
      assert.equal(first.items.length, 3);
      assert.equal(typeof first.nextCursor, "string");
      const git = skills[0]!;
      assert.equal(git.uri, "skill://git-workflow/SKILL.md");
      assert.equal(git.description, "Follow the team's Git conventions");
      assert.deepEqual(git.frontmatter, {
        name: "git-workflow",
        description: "Follow the team's Git conventions",
        license: "MIT",
        metadata: { version: "1.2" },
      });
      assert.equal(skills[7]!.resources, "dynamic");
      assert.equal(await reads(client), 0, "listing fetched no file");
    });

    test("S10: loadSkill hands over every file of an honest skill, byte for byte, by name or by URI", async () => {
      const before = await reads(client);
      const loaded = await client.loadSkill("git-workflow");
      assert.deepEqual(
        loaded.files.map((f) => f.path),
        ["SKILL.md", "assets/logo.bin", "references/GUIDE.md"],
      );
      assert.match(loaded.markdown, /^---\nname: git-workflow\n/);
      assert.deepEqual([...loaded.files[1]!.bytes], [0, 1, 2, 255, 254, 10, 13, 0]);
      assert.equal(
        Buffer.from(loaded.files[2]!.bytes).toString(),
        "# Guide\n\nBranch from main; squash on merge.\n",
      );
      assert.equal(await reads(client), before + 3, "one read per file, none twice");
      const refunds = await client.loadSkill("skill://acme/billing/refunds/SKILL.md");
      assert.equal(refunds.skill.name, "refunds");
      assert.deepEqual(
        refunds.files.map((f) => f.path),
        ["SKILL.md", "examples/email.md"],
      );
    });

    test("S10: a skill that does not match its entry is refused, and nothing of it is handed over", async () => {
      await assert.rejects(
        client.loadSkill("bad-digest"),
        refusal("protocol", "skill_digest_mismatch", /references\/GUIDE\.md/),
      );
      const before = await reads(client);
      await assert.rejects(client.loadSkill("escape"), refusal("protocol", "skill_path_refused"));
      await assert.rejects(client.loadSkill("oversized"), refusal("limit", "skill_too_large"));
      await assert.rejects(client.loadSkill("dynamic"), refusal("protocol", "skill_unverifiable"));
      assert.equal(await reads(client), before, "an entry found unsound before reading reads nothing");
      await assert.rejects(client.loadSkill("liar"), refusal("limit", "response_too_large"));
      await assert.rejects(
        client.loadSkill("frontmatter-lie"),
        refusal("protocol", "skill_frontmatter_mismatch"),
      );
      await assert.rejects(client.loadSkill("no-such-skill"), refusal("config", "unknown_skill"));
      await assert.rejects(
        client.loadSkill("skill://nowhere/SKILL.md"),
        refusal("remote_error", "rpc_error"),
      );
      // The client is still fine after all that.
      assert.equal((await client.loadSkill("refunds")).files.length, 2);
    });
  });
}

test("S10: a server that does not declare the skills extension is asked nothing", async () => {
  const client = await connect(options("2025-11-25", [OTHER]));
  try {
    await assert.rejects(client.listSkills(), refusal("protocol", "skills_not_offered"));
    await assert.rejects(client.loadSkill("anything"), refusal("protocol", "skills_not_offered"));
    await assert.rejects(client.getSkill("skill://a/SKILL.md"), refusal("protocol", "skills_not_offered"));
  } finally {
    await client.close();
  }
});
