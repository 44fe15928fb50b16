// Bundles the example servers and the reference server-everything, each into one file, for the
// test suite. The suite starts these servers a few hundred times, and most of a start was Node
// resolving and loading the SDK's and zod's hundreds of modules one by one (about half a second
// of CPU for server-everything); one minified file starts in about half the CPU. The code is the
// same code from node_modules, and every module keeps its own `import.meta.url`, so a server
// still finds the files it reads beside its sources (server-everything's docs, say).
//
// examples/fleet.mjs uses the bundles when TETHER_FLEET_BUNDLES names their folder; the test
// runner sets it. Without it (a single test file run on its own, demos, benchmarks) the servers
// start from their sources.
//
//   node scripts/bundle-servers.mjs OUTDIR
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");

/** Every module keeps the `import.meta.url` of its own file, packages included. */
const keepMetaUrl = {
  name: "keep-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?js$/ }, async (a) => {
      const text = await readFile(a.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      return {
        contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(a.path).href)),
        loader: "js",
      };
    });
  },
};

/** Bundles every fleet server into `outdir` (file names as in examples/servers/, plus everything.mjs). */
export async function bundleServers(outdir) {
  const require = createRequire(join(root, "package.json"));
  const everything = join(
    dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
  const example = (name) => join(root, "examples", "servers", `${name}.mjs`);
  const names = [
    "legacy-stdio",
    "modern-stdio",
    "legacy-sse",
    "streamable-2025-06-18",
    "streamable-2025-11-25",
    "modern-2026-07-28",
  ];
  await build({
    entryPoints: { ...Object.fromEntries(names.map((n) => [n, example(n)])), everything },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [keepMetaUrl],
    // Some of the bundled packages are CommonJS and call require(); ESM has none of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) {
    console.error("usage: node scripts/bundle-servers.mjs OUTDIR");
    process.exit(2);
  }
  await bundleServers(resolve(outdir));
}
