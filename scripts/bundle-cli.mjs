// Bundles the CLI into one file (dist/tether.mjs), the `tether` binary. A CLI is started cold on
// every use: one file to load instead of some sixty modules is most of its start-up time.
// The library itself ships as separate modules with declarations (dist/index.js).
import { build } from "esbuild";

await build({
  entryPoints: ["src/cli/bin.ts"],
  outfile: "dist/tether.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Dependencies stay external: the installed package brings them, and they load lazily if at all.
  packages: "external",
  banner: { js: "#!/usr/bin/env node" },
  legalComments: "none",
  logLevel: "warning",
});
