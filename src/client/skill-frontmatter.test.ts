// The front matter of a SKILL.md (S10) is read as the official SDK's skill catalog reads it (its
// `skillEntry` builds the entry a server publishes), so an honest skill's front matter always
// matches its entry; YAML outside the subset is refused, never read another way.
import assert from "node:assert/strict";
import { test } from "node:test";
import { skillEntry } from "@modelcontextprotocol/server/ext/skills";
import { FrontMatterError, frontMatterOf, sameJson } from "./skill-frontmatter.ts";

const CASES = [
  "---\nname: x\ndescription: A skill\n---\nbody",
  "\ufeff---\r\nname: x\r\ndescription: CRLF and a byte-order mark\r\n---\r\n",
  "---\nname: x\ndescription: >\n  Folded text\n  over lines\n\n  para\nlicense: MIT\n---\n",
  '---\nname: x\ndescription: |\n  Literal\n    indented\n  end\nextra:\n  version: "1.0"\n  n: 1.5\n  flag: true\n  nothing: ~\n  list:\n    - a\n    - b: 1\n      c: 2\n  flow: [a, \'b\', "c\\u0041\\t", 3]\n  fm: {k: v, n: 2}\n---\n',
  "---\nname: x # comment\ndescription: 'it''s: quoted'\nallowed-tools:\n- Read\n- Bash(git:*)\n---\n",
  "---\nname: x\ndescription: plain\n  continued\n\n  again\nkeep: |+\n  a\n\nstrip: >-\n  b\n  c\n---\n",
  '---\nname: x\ndescription: d\nhex: 0x1F\noct: 0o17\nneg: -3\nexp: 1e3\nstr: 1.2.3\ndate: 2024-01-01\nempty:\nurl: http://example.com/a\n"quoted key": yes\n---\n',
  '---\nname: x\ndescription: d\nmetadata:\n  author: someone\n  version: "2"\n---\n',
];

test("S10: front matter reads as the official SDK reads it", async () => {
  for (const markdown of CASES) {
    const { frontmatter } = await skillEntry("x", { "SKILL.md": markdown });
    const ours = frontMatterOf(markdown);
    assert.ok(sameJson(ours, frontmatter), `${JSON.stringify(ours)}\n!=\n${JSON.stringify(frontmatter)}`);
  }
});

test("S10: YAML outside the subset is refused, never read another way", () => {
  const refused = [
    "name: x",
    "---\nname: x\n",
    "---\nname: &a x\ndescription: *a\n---\n",
    "---\nname: !!str x\n---\n",
    "---\n? complex\n: key\n---\n",
    '---\nname: "open\n  quote"\n---\n',
    "---\nname: [a,\n  b]\n---\n",
    "---\nname: x\nname: y\n---\n",
    "---\nname: .inf\n---\n",
    "---\n\tname: x\n---\n",
    "---\n- a list\n---\n",
    "---\nname: a: b\n---\n",
    "---\nname: |2\n  x\n---\n",
    "---\nname: x\n  bad: indent\n---\n",
  ];
  for (const markdown of refused)
    assert.throws(() => frontMatterOf(markdown), FrontMatterError, JSON.stringify(markdown));
});

test("S10: a key named __proto__ is data, and equality ignores key order only", () => {
  const fm = frontMatterOf('---\n"__proto__": x\nname: y\n---\n');
  assert.equal(Object.getPrototypeOf(fm), Object.prototype);
  assert.deepEqual(Object.keys(fm), ["__proto__", "name"]);
  assert.ok(sameJson({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }));
  assert.ok(!sameJson({ a: 1 }, { a: "1" }));
  assert.ok(!sameJson({ a: [1, 2] }, { a: [2, 1] }));
  assert.ok(!sameJson({ a: 1 }, { a: 1, b: undefined }));
});
