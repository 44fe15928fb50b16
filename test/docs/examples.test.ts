// Every `ts` block in docs/*.md is type-checked against the library, so guides cannot drift from
// the API. Blocks are written out as modules that import the source instead of the package name.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript-api";

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
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) =>
        assert.fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    },
  );
  assert.ok(config);
  const program = ts.createProgram(files, { ...config.options, noEmit: true, noUnusedLocals: false });
  // Only the examples' own diagnostics are asked for: the library itself is checked by
  // `npm run typecheck`, and checking it again here would be most of this test's time.
  const problems = files
    .flatMap((file) => {
      const source = program.getSourceFile(file);
      assert.ok(source, file);
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    })
    .filter((d) => d.file && files.includes(d.file.fileName))
    .map(
      (d) =>
        `${d.file!.fileName.slice(out.length + 1)}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
    );
  assert.deepEqual(problems, []);
});
