// Every `ts` block in docs/*.md is type-checked against the library, so guides cannot drift from
// the API. Blocks are written out as modules that import the source instead of the package name
// (its subpath entries, `mcp-tether/ai` say, included).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const docs = join(root, "docs");
const out = join(root, ".tmp", "doc-examples");

/**
 * What each import of the package names, as the examples (written to .tmp/doc-examples/) reach
 * its source: every entry of package.json's `exports` (`mcp-tether`, `mcp-tether/ai`, ...) to
 * the file of src/ its code is built from (`./dist/x/y.js` is built from `src/x/y.ts`).
 */
function entrySources(): Map<string, string> {
  const { exports } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string | { default: string }>;
  };
  const sources = new Map<string, string>();
  for (const [subpath, target] of Object.entries(exports))
    if (typeof target !== "string")
      sources.set(
        `mcp-tether${subpath.slice(1)}`,
        `../../${target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")}`,
      );
  return sources;
}

/** An example with its imports of the package pointed at the sources. */
export function withSources(code: string, sources: Map<string, string>): string {
  return code.replace(/from "(mcp-tether(?:\/[a-z-]+)?)"/g, (whole, spec: string) => {
    const source = sources.get(spec);
    return source === undefined ? whole : `from "${source}"`;
  });
}

function blocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

test("docs: every TypeScript example type-checks against the library", () => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const files: string[] = [];
  const sources = entrySources();
  for (const name of readdirSync(docs).filter((f) => f.endsWith(".md"))) {
    blocks(readFileSync(join(docs, name), "utf8")).forEach((code, i) => {
      const file = join(out, `${name.replace(/\.md$/, "")}-${i + 1}.ts`);
      writeFileSync(file, `${withSources(code, sources)}\nexport {};\n`);
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

test("docs: an example's imports of the package and its subpath entries reach their sources", () => {
  const sources = entrySources();
  assert.equal(sources.get("mcp-tether"), "../../src/index.ts");
  assert.equal(sources.get("mcp-tether/ai"), "../../src/integrations/ai.ts");
  const code = ['import { connect } from "mcp-tether";', 'import { aiTools } from "mcp-tether/ai";'].join(
    "\n",
  );
  assert.equal(
    withSources(code, sources),
    [
      'import { connect } from "../../src/index.ts";',
      'import { aiTools } from "../../src/integrations/ai.ts";',
    ].join("\n"),
  );
});
