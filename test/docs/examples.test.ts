// Every `ts` block in docs/*.md is type-checked against the library, so guides cannot drift from
// the API. Blocks are written out as modules that import the source instead of the package name.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const docs = join(root, "docs");
const out = join(root, ".tmp", "doc-examples");

function blocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

test("docs: every TypeScript example type-checks against the library", () => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const files: string[] = [];
  for (const name of readdirSync(docs).filter((f) => f.endsWith(".md"))) {
    blocks(readFileSync(join(docs, name), "utf8")).forEach((code, i) => {
      const file = join(out, `${name.replace(/\.md$/, "")}-${i + 1}.ts`);
      writeFileSync(
        file,
        `${code.replaceAll('from "mcp-tether"', 'from "../../src/index.ts"')}\nexport {};\n`,
      );
      files.push(file);
    });
  }
  assert.ok(files.length >= 8, `expected examples in every guide, found ${files.length}`);
  // The project's own compiler checks them, with the project's options, as one program.
  const config = join(out, "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: "../../tsconfig.json",
      compilerOptions: { noEmit: true, noUnusedLocals: false, rootDir: "../.." },
      include: [],
      files: files.map((f) => f.slice(out.length + 1)),
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", config],
    {
      encoding: "utf8",
    },
  );
  assert.equal(tsc.error, undefined);
  const problems = `${tsc.stdout}${tsc.stderr}`
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => line.replaceAll(out, "").replace(/^[\\/]/, ""));
  assert.deepEqual(problems, []);
  assert.equal(tsc.status, 0);
});
