// No cost to anyone who does not import an integration: the core entry (`mcp-tether`) bundled
// with esbuild takes in nothing of the optional peers (the AI SDK, the Agents SDK, OpenTelemetry),
// and each subpath entry imports its own peer and no other. The bundle's size is reported, so a
// change that drags a framework in shows as a jump.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** Package name of an import (`@scope/name` or `name`), or undefined for a Node builtin. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith("node:")) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** The peers' packages and their families (the AI SDK's @ai-sdk/*, OpenTelemetry's @opentelemetry/*). */
const PEER_INPUT = /(^|\/)node_modules\/(ai|@ai-sdk|@openai|@opentelemetry)\//;

async function bundle(entry: string, packages: "bundle" | "external"): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    outdir: join(root, ".tmp", "core-bundle"),
    packages,
    logLevel: "silent",
  });
  return result.metafile;
}

/** The source file an export's code is built from: `./dist/x/y.js` -> `src/x/y.ts`. */
function sourceOf(dist: string): string {
  return dist.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts");
}

const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === "string" ? [] : [{ subpath, ...target, source: sourceOf(target.default) }],
);

test("every export names its types and code, built from a source file of src/", () => {
  assert.ok(entries.length >= 3, "the core and the two integration entries");
  for (const e of entries) {
    assert.equal(e.types, e.default.replace(/\.js$/, ".d.ts"), `${e.subpath}: types beside the code`);
    assert.ok(existsSync(join(root, e.source)), `${e.subpath}: ${e.source} exists`);
  }
  assert.equal(
    entries.find((e) => e.subpath === ".")?.source,
    "src/index.ts",
    "the core entry is src/index.ts",
  );
});

test("the core entry, bundled with its dependencies, takes in nothing of an optional peer", async (t) => {
  const meta = await bundle("src/index.ts", "bundle");
  const peers = Object.keys(meta.inputs).filter((input) => PEER_INPUT.test(input));
  assert.deepEqual(peers, [], `the core bundle takes in optional peers:\n${peers.join("\n")}`);
  const [output] = Object.values(meta.outputs);
  assert.ok(output && output.bytes > 0);
  const inputs = Object.keys(meta.inputs);
  t.diagnostic(
    `core bundle: ${output.bytes} bytes (${(output.bytes / 1024).toFixed(1)} KiB), ` +
      `${inputs.filter((i) => !i.includes("node_modules")).length} modules of src/, ` +
      `${inputs.filter((i) => i.includes("node_modules")).length} of dependencies`,
  );
});

test("the core entry imports only its own dependencies; each subpath entry only its own peer besides", async () => {
  const own = new Set(Object.keys(pkg.dependencies));
  const peerOf: Record<string, string | undefined> = {
    ".": undefined,
    "./ai": "ai",
    "./openai-agents": "@openai/agents",
  };
  for (const e of entries) {
    const meta = await bundle(e.source, "external");
    const imported = new Set(
      Object.values(meta.outputs).flatMap((o) =>
        o.imports.filter((i) => i.external).flatMap((i) => packageOf(i.path) ?? []),
      ),
    );
    const peer = peerOf[e.subpath];
    assert.ok(e.subpath in peerOf, `${e.subpath}: which peer it may import is stated here`);
    const foreign = [...imported].filter((p) => !own.has(p) && p !== peer);
    assert.deepEqual(foreign, [], `${e.subpath} imports packages that are neither dependencies nor its peer`);
    if (peer) {
      assert.ok(peer in pkg.peerDependencies, `${peer} is a declared peer`);
      assert.ok(imported.has(peer), `${e.subpath} imports ${peer}`);
    }
  }
});
