// Bundles the CLI (dist/tether.mjs, the `tether` binary, plus the chunks it loads on demand in
// dist/tether-chunks/). A CLI starts cold on every use: a few files instead of some sixty modules
// is most of its start-up time, and splitting at the entry's dynamic imports means `--version`
// reads only the entry while a command reads the chunks it needs.
// The library itself ships as separate modules with declarations (dist/index.js).
//
//   node scripts/bundle-cli.mjs [outdir]     (default dist; the tests build into a folder of their own)
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const outdir = process.argv[2] ?? "dist";
const chunkDir = "tether-chunks";
// Chunk names carry a content hash: old ones would pile up beside the new.
rmSync(join(outdir, chunkDir), { recursive: true, force: true });

await build({
  entryPoints: { tether: "src/cli/bin.ts" },
  outdir,
  outExtension: { ".js": ".mjs" },
  chunkNames: `${chunkDir}/[name]-[hash]`,
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Dependencies stay external: the installed package brings them, and they load lazily if at all.
  packages: "external",
  banner: { js: "#!/usr/bin/env node" },
  // Less text for V8 to parse on every start (Node 20 has no compile cache); names are kept, so
  // errors and classes read as they do in the source.
  minify: true,
  keepNames: true,
  legalComments: "none",
  logLevel: "warning",
});

// The web explorer's page (`tether inspect`): one script and one stylesheet, for the browser,
// served from beside the CLI bundle (dist/inspect-page/). Nothing is loaded from anywhere else.
await build({
  entryPoints: { page: "src/inspect/page/main.ts" },
  outdir: join(outdir, "inspect-page"),
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
await build({
  entryPoints: { page: "src/inspect/page/page.css" },
  outdir: join(outdir, "inspect-page"),
  bundle: true,
  minify: true,
  logLevel: "warning",
});
