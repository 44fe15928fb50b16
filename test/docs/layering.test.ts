// The layering rule of docs/architecture.md, checked over every import in src/: a folder imports
// only folders of a lower layer (or itself), so no folder-level cycle can form. The layer table is
// read from the document itself, so the rule and its description cannot drift apart.

import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const src = join(root, "src");

/** `| 3 | `protocol/` | ... |` rows of the layer table: folder name to layer number. */
function layersFromDoc(): Map<string, number> {
  const doc = readFileSync(join(root, "docs/architecture.md"), "utf8");
  const layers = new Map<string, number>();
  for (const m of doc.matchAll(/^\|\s*(\d+)\s*\|\s*`([a-z-]+\/|index\.ts)`\s*\|/gm))
    layers.set(m[2]!.replace(/\/$/, ""), Number(m[1]));
  return layers;
}

/** `never imports `protocol/`` in a row of the layer table: folders a folder must not import though they sit lower. */
export function forbiddenFromDoc(doc: string): Map<string, string[]> {
  const forbidden = new Map<string, string[]>();
  for (const row of doc.matchAll(/^\|\s*\d+\s*\|\s*`([a-z-]+)\/`\s*\|(.*)\|\s*$/gm)) {
    const phrase = /\bnever imports ((?:`[a-z-]+\/`(?:,\s*|\s+or\s+)?)+)/i.exec(row[2]!);
    if (phrase)
      forbidden.set(
        row[1]!,
        [...phrase[1]!.matchAll(/`([a-z-]+)\/`/g)].map((m) => m[1]!),
      );
  }
  return forbidden;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** The folder of src/ a file belongs to; `index.ts` for files at the top of src/. */
function folderOf(file: string): string {
  const parts = relative(src, file).split(sep);
  return parts.length === 1 ? "index.ts" : parts[0]!;
}

/** Every relative module a file names: static imports, `export ... from`, and `import()`. */
export function importsOf(text: string): string[] {
  const specs: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"(\.{1,2}\/[^"]+)"/gms))
    specs.push(m[1]!);
  for (const m of text.matchAll(/^\s*import\s*"(\.{1,2}\/[^"]+)"/gm)) specs.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g)) specs.push(m[1]!);
  return specs;
}

/** Every file of src/ (tests left out) and the files of src/ it imports. */
function fileGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(src)) {
    const targets = new Set<string>();
    for (const spec of importsOf(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), spec);
      if (target.startsWith(src + sep)) targets.add(relative(root, target));
    }
    graph.set(relative(root, file), targets);
  }
  return graph;
}

/** The cycles of a directed graph, each as `a -> b -> a`. */
function cyclesOf(graph: Map<string, Set<string>>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) visit(node);
  return cycles;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles(src)) {
    for (const spec of importsOf(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(src + sep)) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) out.push({ from, to, file: relative(root, file), spec });
    }
  }
  return out;
}

test("every folder of src/ has a layer in docs/architecture.md", () => {
  const layers = layersFromDoc();
  assert.ok(layers.size >= 5, "the layer table was found");
  const folders = readdirSync(src).filter((n) => statSync(join(src, n)).isDirectory());
  for (const folder of [...folders, "index.ts"])
    assert.ok(layers.has(folder), `${folder}/ is missing from the layer table in docs/architecture.md`);
});

test("layers point down only: no folder imports a folder of its own or a higher layer", () => {
  const layers = layersFromDoc();
  const upward = edges()
    .filter((e) => (layers.get(e.to) ?? Number.POSITIVE_INFINITY) >= (layers.get(e.from) ?? -1))
    .map(
      (e) =>
        `${e.file} (${e.from}, layer ${layers.get(e.from)}) imports ${e.spec} (${e.to}, layer ${layers.get(e.to)})`,
    );
  assert.deepEqual(upward, [], `imports that do not point down:\n${upward.join("\n")}`);
});

test("transports carry bytes, not eras: transport/ never imports protocol/, nor any folder its row forbids", () => {
  const forbidden = forbiddenFromDoc(readFileSync(join(root, "docs/architecture.md"), "utf8"));
  assert.deepEqual(
    forbidden.get("transport"),
    ["protocol"],
    "the table says transport/ never imports protocol/",
  );
  const broken = edges()
    .filter((e) => forbidden.get(e.from)?.includes(e.to))
    .map((e) => `${e.file} (${e.from}) imports ${e.spec} (${e.to}), which its row in the table forbids`);
  assert.deepEqual(broken, [], `forbidden imports:\n${broken.join("\n")}`);
});

test("the table's never-imports phrase is read with one folder or several", () => {
  const doc = [
    "| 5 | `transport/` | Bytes. They carry bytes, not eras: never imports `protocol/`. |",
    "| 6 | `auth/` | OAuth. Never imports `client/`, `connect/` or `cli/`. |",
    "| 6 | `client/` | The ready client, which imports whatever sits lower. |",
  ].join("\n");
  assert.deepEqual(
    [...forbiddenFromDoc(doc)],
    [
      ["transport", ["protocol"]],
      ["auth", ["client", "connect", "cli"]],
    ],
  );
});

test("no import cycle between folders", () => {
  const graph = new Map<string, Set<string>>();
  for (const e of edges()) {
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    graph.get(e.from)!.add(e.to);
  }
  const cycles = cyclesOf(graph);
  assert.deepEqual(cycles, [], `folder cycles:\n${cycles.join("\n")}`);
});

test("no import cycle between files either", () => {
  const cycles = cyclesOf(fileGraph());
  assert.deepEqual(cycles, [], `file cycles:\n${cycles.join("\n")}`);
});

test("the import scanner sees static, re-exported, multi-line and dynamic imports", () => {
  const text = [
    'import { a } from "../x/a.ts";',
    'import type {\n  B,\n  C,\n} from "../y/b.ts";',
    'export { d } from "./d.ts";',
    'const e = await import("../z/e.ts");',
    'import "../w/side.ts";',
    '// from "../not/an-import.ts" in a comment of its own line is not at a statement start',
  ].join("\n");
  assert.deepEqual(importsOf(text).sort(), ["../w/side.ts", "../x/a.ts", "../y/b.ts", "../z/e.ts", "./d.ts"]);
});
