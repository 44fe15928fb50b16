// docs/requirements.md is the contract inside the repository: every requirement ID with what holds
// and the test files that prove it. This test reads the document and the tree at run time, so a
// test added or renamed anywhere is judged as it is, not against a list kept here:
//   - every ID named in src/, test/ or docs/architecture.md is defined in the document (or listed
//     there as a look-alike that is not a requirement);
//   - every ID the document defines is cited by a test file, unless marked "Tests: none yet", and
//     then no test may cite it (its line belongs with the others, with its files);
//   - every test file listed for an ID exists and cites that ID.
// A *mention* is any token that looks like an ID: a family letter and one or two digits.
// A *citation* is the convention tests use: `test("C2: ...")`, `"K1, X2: ..."`, `(P6)`,
// `(CONTRACT S8, with P8 and X4)`, `Contract IDs: X2 (...)`; a range such as `R1–R8` names each ID
// in it.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const rel = (path: string) => relative(root, path).split(sep).join("/");
const docPath = join(root, "docs", "requirements.md");
/**
 * This file. Its own examples of the convention are mentions like any other (each must be defined),
 * but they prove nothing: they neither cite an ID nor keep a look-alike listed.
 */
const self = rel(fileURLToPath(import.meta.url));
const DOC = "docs/requirements.md";

const FAMILIES = "NERCPXDKQSM";
/** Anything that looks like an ID, the hook's pattern: a family letter and one or two digits. */
const MENTION = new RegExp(`\\b[${FAMILIES}][0-9]{1,2}\\b`, "g");
/** `R1–R8`, `N1-N8`, `N2 to N7`: a range within one family. */
const RANGE = new RegExp(`\\b([${FAMILIES}])([0-9]{1,2})\\s*(?:–|-|to)\\s*\\1([0-9]{1,2})\\b`, "g");
const ID = `\\b[${FAMILIES}][1-9][0-9]?\\b`;
/** IDs joined by `,`, `/`, `–`, `-`, spaces, `and`, `with`, `to`: `S7, with C5, E4, K1`. */
const LIST = `${ID}(?:(?:\\s*[,/–-]\\s*|\\s+)(?:(?:and|with|to)\\s+)?${ID})*`;
/** A list that cites: opened by `(`, `CONTRACT` or `Contract ID(s):`, or closed by `:`, `)` or ` (`. */
const CITATION = new RegExp(
  `(\\(\\s*|\\bCONTRACT\\s+|\\bContract IDs?:\\s*)?(${LIST})(\\s*[:)]|\\s+\\()?`,
  "g",
);

/** Every ID of a range, both ends included. */
function expandRanges(text: string): string[] {
  const ids: string[] = [];
  for (const m of text.matchAll(RANGE))
    for (let n = Number(m[2]); n <= Number(m[3]); n++) ids.push(`${m[1]}${n}`);
  return ids;
}

/** Mentions with their line numbers, ranges expanded. */
export function mentionsOf(text: string): { id: string; line: number }[] {
  const found: { id: string; line: number }[] = [];
  text.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(MENTION)) found.push({ id: m[0], line: i + 1 });
    for (const id of expandRanges(line)) found.push({ id, line: i + 1 });
  });
  return found;
}

/** The IDs a text cites by the tests' convention, ranges expanded. */
export function citationsOf(text: string): Set<string> {
  const ids = new Set<string>();
  for (const m of text.matchAll(CITATION)) {
    if (m[1] === undefined && m[3] === undefined) continue;
    for (const id of m[2]!.match(new RegExp(ID, "g")) ?? []) ids.add(id);
    for (const id of expandRanges(m[2]!)) ids.add(id);
  }
  return ids;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const codeFiles = () =>
  [...filesUnder(join(root, "src")), ...filesUnder(join(root, "test"))].filter((f) =>
    /\.[cm]?[jt]s$/.test(f),
  );
const isTestFile = (path: string) => /\.(test|qualify)\.[cm]?[jt]s$/.test(path);

/** Test file (relative path) to the IDs it cites. */
function citationsByTestFile(): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const file of codeFiles().filter((f) => isTestFile(f) && rel(f) !== self))
    map.set(rel(file), citationsOf(readFileSync(file, "utf8")));
  return map;
}

interface Entry {
  id: string;
  line: number;
  text: string;
  /** The links after `Tests:`: their text, and their target as a path from the repository root. */
  tests: { text: string; path: string | undefined }[];
  noneYet: boolean;
}

/**
 * `- **C2** what holds ... Tests: [path], [path].`: a list item, possibly over several lines, its
 * links inline (`[path](../path)`) or shortcut references defined on a line `[path]: ../path`.
 */
export function entriesOf(markdown: string): { entries: Entry[]; lookAlikes: Map<string, number> } {
  const lines = markdown.split("\n");
  const targets = new Map<string, string>();
  for (const m of markdown.matchAll(/^\[([^\]]+)\]:\s*(\S+)/gm)) targets.set(m[1]!, m[2]!);
  const fromDocs = (target: string | undefined) =>
    target === undefined ? undefined : rel(resolve(root, "docs", target));
  const entries: Entry[] = [];
  const lookAlikes = new Map<string, number>();
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("#")) section = line;
    const lookAlike = /^- `([A-Z][0-9]{1,2})`/.exec(line);
    if (lookAlike && /look-alike/i.test(section)) lookAlikes.set(lookAlike[1]!, i + 1);
    const head = /^- \*\*([A-Z][0-9]{1,2})\*\*\s*(.*)$/.exec(line);
    if (!head) continue;
    let block = head[2]!;
    for (let j = i + 1; j < lines.length && /^\s+\S/.test(lines[j]!); j++) block += ` ${lines[j]!.trim()}`;
    const [text, tests = ""] = block.split(/\bTests:/);
    entries.push({
      id: head[1]!,
      line: i + 1,
      text: text!.trim(),
      tests: [...tests.matchAll(/\[([^\]]+)\](?:\(([^)]+)\))?/g)].map((m) => ({
        text: m[1]!,
        path: fromDocs(m[2] ?? targets.get(m[1]!)),
      })),
      noneYet: /^\s*none yet\b/.test(tests),
    });
  }
  return { entries, lookAlikes };
}

const doc = () => entriesOf(readFileSync(docPath, "utf8"));

test("requirements: the document defines each ID once, with what holds and its test files", () => {
  const { entries } = doc();
  assert.ok(entries.length >= 50, `expected the requirement entries in ${DOC}, found ${entries.length}`);
  const problems: string[] = [];
  const seen = new Map<string, number>();
  for (const e of entries) {
    if (seen.has(e.id)) problems.push(`${e.id} is defined twice, at ${DOC}:${seen.get(e.id)} and :${e.line}`);
    seen.set(e.id, e.line);
    if (!FAMILIES.includes(e.id[0]!)) problems.push(`${e.id} (${DOC}:${e.line}) is of no family`);
    if (e.text.length < 20) problems.push(`${e.id} (${DOC}:${e.line}) does not say what holds`);
    if (e.tests.length === 0 && !e.noneYet)
      problems.push(`${e.id} (${DOC}:${e.line}) lists no test files and is not marked "Tests: none yet"`);
  }
  assert.deepEqual(problems, []);
});

test("requirements: every ID named in src/, test/ or docs/architecture.md is in the document", () => {
  const { entries, lookAlikes } = doc();
  const defined = new Set(entries.map((e) => e.id));
  const unknown = new Map<string, Set<string>>();
  const named = new Set<string>();
  const files = [...codeFiles(), join(root, "docs", "architecture.md")];
  for (const file of files)
    for (const { id, line } of mentionsOf(readFileSync(file, "utf8"))) {
      if (rel(file) !== self) named.add(id);
      if (defined.has(id) || lookAlikes.has(id)) continue;
      unknown.set(id, new Set(unknown.get(id)).add(`${rel(file)}:${line}`));
    }
  const problems = [...unknown].map(
    ([id, where]) =>
      `${id} is named at ${[...where].join(", ")} but ${DOC} neither defines it nor lists it as a look-alike`,
  );
  for (const [id, line] of lookAlikes)
    if (!named.has(id))
      problems.push(`${id} is listed as a look-alike (${DOC}:${line}) but nothing names it`);
  assert.deepEqual(problems, []);
});

test("requirements: every ID in the document is cited by a test file, unless marked none yet", () => {
  const byFile = citationsByTestFile();
  const citing = (id: string) => [...byFile].filter(([, ids]) => ids.has(id)).map(([file]) => file);
  const problems: string[] = [];
  for (const e of doc().entries) {
    const files = citing(e.id);
    if (!e.noneYet && files.length === 0)
      problems.push(`${e.id} (${DOC}:${e.line}) is cited by no test file (e.g. test("${e.id}: ..."))`);
    if (e.noneYet && files.length > 0)
      problems.push(
        `${e.id} (${DOC}:${e.line}) is marked "none yet" but cited by ${files.join(", ")}: list them instead`,
      );
  }
  assert.deepEqual(problems, []);
});

test("requirements: each test file listed for an ID exists and cites that ID", () => {
  const byFile = citationsByTestFile();
  const problems: string[] = [];
  for (const e of doc().entries)
    for (const t of e.tests) {
      const where = `${e.id} (${DOC}:${e.line}) lists [${t.text}]`;
      if (t.path === undefined)
        problems.push(`${where}, a link with no target (add \`[${t.text}]: ../${t.text}\`)`);
      else if (t.text !== t.path) problems.push(`${where}, whose link points to ${t.path}`);
      else if (!existsSync(join(root, t.path))) problems.push(`${where}, which does not exist`);
      else if (!isTestFile(t.path)) problems.push(`${where}, which is not a test file`);
      else if (!byFile.get(t.path)?.has(e.id)) problems.push(`${where}, which does not cite ${e.id}`);
    }
  assert.deepEqual(problems, []);
});

test("requirements: mentions and citations are told apart as the tests write them", () => {
  const text = [
    'test("K1, X2: a record", ...);',
    'test("R4 (control): the veto", ...);',
    "// Recovery (CONTRACT R1–R3, C6) against real servers",
    "// Contract IDs: S7 (cancellation crosses), M2 (notifications)",
    "/** C0 and C1 controls become escapes; the P1 tests run it out */",
    "// 0xC1, E2E and C1x are not IDs",
  ].join("\n");
  assert.deepEqual([...citationsOf(text)].sort(), ["C6", "K1", "M2", "R1", "R2", "R3", "R4", "S7", "X2"]);
  assert.deepEqual([...new Set(mentionsOf(text).map((m) => m.id))].sort(), [
    "C0",
    "C1",
    "C6",
    "K1",
    "M2",
    "P1",
    "R1",
    "R2",
    "R3",
    "R4",
    "S7",
    "X2",
  ]);
});
