// Ours as it ships: plain JavaScript. The bench compiles src/ once at start (esbuild, one file in
// .tmp/bench-lib/) and every section calls that build, so the figures are of the code in the
// tree without the test runner's transform: through tsx, every function carries a name-keeping
// wrapper that costs about 6% of a stdio call's CPU, which neither dist/ nor the official
// clients pay.

import { mkdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const OUT = root(".tmp/bench-lib/index.mjs");

mkdirSync(root(".tmp/bench-lib"), { recursive: true });
// Each process of the bench (the memory probes too) builds its own copy of the same text; the
// write is atomic enough for sequential processes, and the build takes well under a second.
await build({
  entryPoints: [root("src/index.ts")],
  outfile: OUT,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  logLevel: "warning",
});

/** The library's public API, from the build. */
export const lib = (await import(pathToFileURL(OUT).href)) as typeof import("../../src/index.ts");
