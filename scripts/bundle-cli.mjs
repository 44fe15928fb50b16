// Bundles the CLI: dist/tether.mjs, the `tether` binary, plus the chunks it loads on demand in
// dist/tether-chunks/, and dist/tether-session.mjs, the one file a call on a session loads. A CLI
// starts cold on every use: a few files instead of some sixty modules is most of its start-up
// time, and splitting at the entry's dynamic imports means `--version` reads only what it needs
// while a command reads the chunks it needs.
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

/** What both builds share. */
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Dependencies stay external: the installed package brings them, and they load lazily if at all.
  // OpenTelemetry is the exception: `--trace` needs its API, SDK and OTLP exporter, which the
  // package does not depend on (the API is an optional peer of the library), so they are bundled
  // into chunks of their own that only `--trace` loads (the exporter's only with an endpoint set).
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
  banner: { js: "#!/usr/bin/env node" },
  // Less text for V8 to parse on every start (Node 20 has no compile cache); names are kept, so
  // errors and classes read as they do in the source.
  minify: true,
  keepNames: true,
  legalComments: "none",
  logLevel: "warning",
};

// `tether call @NAME ...`, the hot path of sessions, is one file of its own (dist/tether-session.mjs):
// a Node start pays about a millisecond for each module file it loads, and this path would
// otherwise read a dozen shared chunks. What it does not take, it hands to the whole CLI, which
// the entry passes in (so nothing of main.ts is copied in here). The modules it shares with the
// rest are copied into it: the two builds never share state (the fallback starts afresh).
await build({
  ...common,
  entryPoints: { "tether-session": "src/cli/session-entry.ts" },
  outdir,
  outExtension: { ".js": ".mjs" },
  // It has no dynamic import of its own: the whole CLI and the terminal prompts are the entry's.
  splitting: false,
});

/** The entry's `import("./session-entry.ts")` becomes the file built above. */
const sessionEntry = {
  name: "session-entry",
  setup(b) {
    b.onResolve({ filter: /^\.\/session-entry\.ts$/ }, () => ({ path: "./tether-session.mjs", external: true }));
  },
};

await build({
  ...common,
  entryPoints: { tether: "src/cli/bin.ts" },
  outdir,
  outExtension: { ".js": ".mjs" },
  chunkNames: `${chunkDir}/[name]-[hash]`,
  splitting: true,
  plugins: [...common.plugins, sessionEntry],
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
