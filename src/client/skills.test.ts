// A skill's entry is judged before a file is read (S10): every path confined to the skill's folder
// and writable as it is, the limits, the name; a name that names no skill or several is the
// caller's to settle.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TetherError } from "../errors/tether-error.ts";
import type { ReadResourceResult, Skill, SkillFile } from "./results.ts";
import { loadSkill, planLoad, SKILL_LIMITS, type SkillHost } from "./skills.ts";

const DIGEST = `sha256:${"a".repeat(64)}`;
const file = (uri: string, size = 1): SkillFile => ({ uri, digest: DIGEST, size });

function skill(files: SkillFile[], name = "demo", uri = `skill://acme/${name}/SKILL.md`): Skill {
  return {
    uri,
    name,
    description: "d",
    frontmatter: { name, description: "d" },
    resources: [file(uri), ...files],
  };
}

const reason = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof TetherError, String(e));
    return `${e.code}/${e.reason}`;
  }
  return "accepted";
};

test("S10: paths that could leave the skill's folder, or that no folder can hold, are refused before any read", () => {
  const root = "skill://acme/demo";
  const refused = [
    `${root}/../escape.md`,
    `${root}/a/../../escape.md`,
    `${root}/%2e%2e/escape.md`,
    `${root}/./x.md`,
    `${root}//x.md`,
    `${root}/a%2Fb.md`,
    `${root}/a%5Cb.md`,
    `${root}/a\\b.md`,
    `${root}/nul%00.md`,
    `${root}/bell%07.md`,
    `${root}/c:d.md`,
    `${root}/x.md?q=1`,
    `${root}/x.md#frag`,
    `${root}/${"n".repeat(256)}`,
    `${root}/${Array.from({ length: 40 }, () => "d").join("/")}/x.md`,
    `${root}/%ff`,
    "skill://acme/other/x.md",
    "skill://acme/demox/x.md",
    "/etc/passwd",
    "file:///etc/passwd",
  ];
  for (const uri of refused)
    assert.equal(
      reason(() => planLoad(skill([file(uri)]), SKILL_LIMITS.bytes)),
      "protocol/skill_path_refused",
      uri,
    );
  // Two paths one folder cannot hold apart.
  for (const pair of [
    ["Guide.md", "guide.md"],
    ["a", "a/b.md"],
    ["x.md", "x.md"],
  ])
    assert.equal(
      reason(() => planLoad(skill(pair.map((p) => file(`${root}/${p}`))), SKILL_LIMITS.bytes)),
      "protocol/skill_path_refused",
      pair.join(" + "),
    );
  // What is fine: nested folders, percent-encoded spaces and non-ASCII names.
  const plan = planLoad(
    skill([file(`${root}/references/My%20Guide.md`), file(`${root}/caf%c3%a9/x.md`)]),
    SKILL_LIMITS.bytes,
  );
  assert.deepEqual(
    plan.map((p) => p.path),
    ["SKILL.md", "references/My Guide.md", "café/x.md"],
  );
});

test("S10: the entry itself must be sound: a SKILL.md of its own, its name, digests, the limits, not dynamic", () => {
  const plan = (s: Skill, max: number = SKILL_LIMITS.bytes) => reason(() => planLoad(s, max));
  const noMain = { ...skill([]), resources: [file("skill://acme/demo/x.md")] };
  assert.equal(plan(noMain), "protocol/skill_path_refused");
  assert.equal(plan(skill([], "demo", "skill://acme/other/SKILL.md")), "protocol/skill_path_refused");
  assert.equal(plan(skill([], "Bad_Name", "skill://acme/Bad_Name/SKILL.md")), "protocol/skill_path_refused");
  assert.equal(plan(skill([], "demo", "skill://acme/demo/README.md")), "protocol/skill_path_refused");
  const badDigest = skill([{ uri: "skill://acme/demo/x.md", digest: "md5:abc", size: 1 }]);
  assert.equal(plan(badDigest), "protocol/skill_path_refused");
  assert.equal(plan({ ...skill([]), resources: "dynamic" }), "protocol/skill_unverifiable");
  const many = skill(Array.from({ length: SKILL_LIMITS.files }, (_, i) => file(`skill://acme/demo/f${i}`)));
  assert.equal(plan(many), "limit/skill_too_large");
  assert.equal(plan(skill([file("skill://acme/demo/big", SKILL_LIMITS.bytes)])), "limit/skill_too_large");
  assert.equal(plan(skill([file("skill://acme/demo/x", 100)]), 100), "limit/skill_too_large");
  assert.equal(plan(skill([file("skill://acme/demo/x", 99)]), 100), "accepted");
});

test("S10: a name that names several listed skills is refused, and nothing is read", async () => {
  let read = 0;
  const twins: Skill[] = [
    skill([], "refunds", "skill://a/refunds/SKILL.md"),
    skill([], "refunds", "skill://b/refunds/SKILL.md"),
  ];
  const host: SkillHost = {
    serverExtensions: { "io.modelcontextprotocol/skills": {} },
    listSkills: async () => twins,
    getSkill: async () => twins[0]!,
    readResource: async (): Promise<ReadResourceResult> => {
      read++;
      return { contents: [] };
    },
  };
  await assert.rejects(loadSkill(host, "refunds"), (e: unknown) => {
    assert.ok(e instanceof TetherError);
    assert.equal(`${e.code}/${e.reason}`, "config/ambiguous_skill");
    assert.match(e.message, /2 skills named "refunds"/);
    return true;
  });
  await assert.rejects(loadSkill(host, "refunds", { maxBytes: 0 }), /maxBytes/);
  await assert.rejects(loadSkill(host, "refunds", { maxBytes: SKILL_LIMITS.bytes + 1 }), /maxBytes/);
  assert.equal(read, 0);
});
