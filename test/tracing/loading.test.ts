// With tracing off nothing of it is imported: the library's module graph, as esbuild resolves it
// from src/index.ts, reaches @opentelemetry/api only through the dynamic import of
// src/tracing/otel.ts, which connect/runtime.ts makes only when `tracing` is set; and no other
// module names the peer at all.

import assert from "node:assert/strict";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

test("importing the library loads no OpenTelemetry: @opentelemetry/api is reached only by the dynamic import of tracing/otel.ts", async () => {
  const result = await build({
    entryPoints: [join(root, "src/index.ts")],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    packages: "external",
    write: false,
    outdir: join(root, ".test-build/tracing-loading"),
    metafile: true,
    absWorkingDir: root,
    logLevel: "silent",
  });
  const inputs = result.metafile.inputs;
  const importersOf = (path: string) =>
    Object.entries(inputs).flatMap(([file, input]) =>
      input.imports
        .filter((i) => i.path === path || i.original === path)
        .map((i) => ({ file, kind: i.kind })),
    );
  const peer = importersOf("@opentelemetry/api");
  assert.deepEqual(
    peer.map((i) => i.file),
    ["src/tracing/otel.ts"],
    "only tracing/otel.ts names @opentelemetry/api",
  );
  assert.ok(
    peer.every((i) => i.kind === "dynamic-import"),
    "and only by import()",
  );
  const otel = importersOf("src/tracing/otel.ts");
  assert.deepEqual(otel, [{ file: "src/connect/runtime.ts", kind: "dynamic-import" }]);
  // The entry chunk (what `import "mcp-tether"` loads before anything is called) holds none of it.
  const entry = Object.values(result.metafile.outputs).find((o) => o.entryPoint === "src/index.ts");
  assert.ok(entry);
  assert.equal(entry.inputs["src/tracing/otel.ts"], undefined);
  assert.ok(!entry.imports.some((i) => i.path.includes("@opentelemetry") && i.kind !== "dynamic-import"));
});

test("the CLI bundles OpenTelemetry into chunks that only --trace loads, the OTLP exporter into one only an endpoint loads", async () => {
  const result = await build({
    entryPoints: { tether: join(root, "src/cli/bin.ts") },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    write: false,
    outdir: join(root, ".test-build/tracing-cli-loading"),
    metafile: true,
    absWorkingDir: root,
    logLevel: "silent",
    // As scripts/bundle-cli.mjs: packages external, but OpenTelemetry's bundled.
    plugins: [
      {
        name: "external-packages",
        setup(b) {
          b.onResolve({ filter: /^[^./#]/ }, (args) =>
            args.path.startsWith("@opentelemetry/") ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  const inputs = result.metafile.inputs;
  const importersOf = (path: string) =>
    Object.entries(inputs).flatMap(([file, input]) =>
      input.imports.filter((i) => i.path === path).map((i) => ({ file, kind: i.kind })),
    );
  const exporter = Object.keys(inputs).filter((f) => f.includes("exporter-trace-otlp-http/"));
  assert.ok(exporter.length > 0, "the exporter is bundled, not a runtime dependency");
  assert.deepEqual(importersOf("src/cli/trace-export.ts"), [
    { file: "src/cli/trace.ts", kind: "dynamic-import" },
  ]);
  assert.deepEqual(importersOf("src/cli/trace.ts"), [{ file: "src/cli/main.ts", kind: "dynamic-import" }]);
  const outputs = Object.values(result.metafile.outputs);
  const entry = outputs.find((o) => o.entryPoint === "src/cli/bin.ts");
  assert.ok(entry);
  const opentelemetry = (o: (typeof outputs)[number]) =>
    Object.keys(o.inputs).filter((f) => f.includes("@opentelemetry/"));
  assert.deepEqual(opentelemetry(entry), [], "the CLI's entry holds none of it");
  // No chunk that holds the exporter holds anything of tether's but trace-export.ts.
  for (const o of outputs.filter((o) => exporter.some((f) => f in o.inputs)))
    assert.deepEqual(
      Object.keys(o.inputs).filter((f) => f.startsWith("src/") && f !== "src/cli/trace-export.ts"),
      [],
    );
});
