// `npm run qualify`: the package as users get it. Packs the project, installs the tarball into
// a scratch folder with production dependencies only, compiles the CLI into a single binary with
// Bun, and runs the qualification suite against the installed library and CLI under Node and Bun
// and against the binary; then runs every client scenario of the official conformance suite (the
// pinned release and the newest one) against the installed library.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = join(root, ".tmp", "qualify");
const app = join(work, "app");
const bun = join(root, "node_modules", ".bin", "bun");
const binary = join(work, "tether");

function step(title, fn) {
  const t = performance.now();
  process.stdout.write(`\n== ${title}\n`);
  const r = fn();
  process.stdout.write(`   (${Math.round(performance.now() - t)} ms)\n`);
  return r;
}

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...options });
  if (r.status !== 0) {
    process.stderr.write(`qualify: ${[cmd, ...args].join(" ")} failed (${r.status ?? r.signal})\n`);
    process.exit(1);
  }
}

rmSync(work, { recursive: true, force: true });
mkdirSync(app, { recursive: true });

step("build and pack", () => {
  run("npm", ["run", "build", "--silent"]);
  run("npm", ["pack", "--silent", "--pack-destination", work], { stdio: ["ignore", "ignore", "inherit"] });
});
const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
if (!tarball) throw new Error("npm pack produced no tarball");

step(`install ${tarball} with production dependencies only`, () => {
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "qualify-app",
      private: true,
      type: "module",
      dependencies: { "mcp-tether": `file:../${tarball}` },
    }),
  );
  run("npm", ["install", "--omit=dev", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"], {
    cwd: app,
  });
  copyFileSync(join(root, "qualify", "driver.mjs"), join(app, "driver.mjs"));
});

step("compile the CLI into one binary (bun build --compile)", () => {
  run(
    bun,
    [
      "build",
      "--compile",
      join(app, "node_modules", "mcp-tether", "dist", "tether.mjs"),
      "--outfile",
      binary,
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  process.stdout.write(
    `   ${execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()} (${binary})\n`,
  );
});

step("qualification suite: library under Node and Bun, CLI under Node, Bun and the binary", () => {
  run(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      "--test-concurrency=1",
      join(root, "test", "qualification", "packed.qualify.ts"),
    ],
    {
      env: { ...process.env, QUALIFY_APP: app, QUALIFY_BUN: bun, QUALIFY_BINARY: binary },
    },
  );
});

step("official conformance suites, pinned and newest (every client scenario, twice)", () => {
  const dir = join(root, "qualify", "conformance");
  const installed = ["@modelcontextprotocol/conformance", "conformance-next", "yaml"].every((p) =>
    existsSync(join(dir, "node_modules", p, "package.json")),
  );
  if (!installed) run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir });
  // The conformance client drives the installed package too, not the checkout.
  run(process.execPath, [join(dir, "run.mjs")], {
    env: {
      ...process.env,
      TETHER_CONFORMANCE_LIB: join(app, "node_modules", "mcp-tether", "dist", "index.js"),
    },
  });
});
