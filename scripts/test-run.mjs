// Runs a set of test files the way `npm test` wants them run: each file bundled once with esbuild
// into plain JavaScript, then node:test over the bundles, with no TypeScript loader in the test
// processes.
//
// Why: node:test starts one process per file, and with a TypeScript loader each of those processes
// loads the loader and then compiles some eighty modules of src/ and the test helpers one by one:
// about a second of CPU per file before the first test runs, over a hundred files. One esbuild
// pass compiles everything in well under a second, and each test process then loads one file.
//
//   node scripts/test-run.mjs [--concurrency N] [--timeout MS] [--check NAME]... FILE...
//
// `--check NAME` also runs `npm run NAME` (build, typecheck, lint) beside the tests, its output
// held back and shown at the end; any failure fails the run. The tests need only the CLI bundle,
// which `npm test` builds first, so the slow single-threaded checks fill the second core while
// tests wait on their servers, instead of running one after another before the first test.
//
// Behaviour does not change: every module keeps its own `import.meta.url` (so fixtures, examples
// and docs are found beside the sources, as under the loader), packages stay external (the same
// node_modules copies load), and the type check stays `npm run typecheck`. Scripts that tests
// run as child processes are bundled the same way (test/helpers/child-exit.ts). Single files can still be
// run directly: `node --import tsx --test test/faults/x.test.ts`.

import { spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { bundleServers } from "./bundle-servers.mjs";

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "..");
const outdir = resolve(root, ".test-build");

const args = process.argv.slice(2);
// Three files at a time: with two, the cores sat idle for about a fifth of the run while files
// waited on their servers; a fourth gained nothing more (2 min 26 s, 2 min 9 s and 2 min 8 s idle).
let concurrency = "3";
// node:test applies this bound to each file as a whole as well as to each test. It is there to end a
// hang, not to judge speed: a file of CLI runs that takes 15 s idle has taken over a minute with
// both cores busy, so the bound is three minutes.
let timeout = "180000";
const patterns = [];
const checks = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--concurrency") concurrency = args[++i];
  else if (args[i] === "--check") checks.push(args[++i]);
  else if (args[i] === "--timeout") timeout = args[++i];
  else patterns.push(args[i]);
}

// The shell has expanded the globs; a pattern that matched nothing arrives as written.
const entries = patterns.filter((p) => !p.includes("*")).map((p) => relative(root, resolve(p)));
if (entries.length === 0) {
  console.error(`test-run: no test files match ${patterns.join(" ")}`);
  process.exit(2);
}

/** Each module of ours keeps the `import.meta.url` of its source file. */
const keepMetaUrl = {
  name: "keep-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?[tj]s$/ }, async (a) => {
      if (a.path.includes(`${"/"}node_modules${"/"}`)) return undefined;
      const text = await readFile(a.path, "utf8");
      const url = JSON.stringify(pathToFileURL(a.path).href);
      return {
        contents: text.replaceAll("import.meta.url", url),
        loader: /\.[cm]?ts$/.test(a.path) ? "ts" : "js",
      };
    });
  },
};

// A CA bundle named by NODE_EXTRA_CA_CERTS is parsed by every Node process as it boots, before any
// of its code runs: on the machines this suite runs on that is about 90 ms of CPU per process, and
// the suite starts well over a thousand (CLI runs, servers, helpers). Every test talks to loopback
// over plain HTTP or to child processes, never through TLS, so no test process needs the bundle.
delete process.env.NODE_EXTRA_CA_CERTS;

// The checks need nothing of what follows: they start first and fill the cores while it is built.
const running = new Set();
const checkRuns = checks.map(runCheck);
let testing = false;
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    for (const c of running) c.kill(sig);
    // Once the tests run, their runner ends on the signal and this script reports; before that
    // there is nothing to wait for.
    if (!testing) process.exit(1);
  });
}
// A build that fails ends the run; the checks already started end with it.
process.on("exit", () => {
  for (const c of running) c.kill("SIGTERM");
});

await rm(outdir, { recursive: true, force: true });
// The example servers and server-everything, one file each, for examples/fleet.mjs to start; built
// beside the tests' own bundle.
const servers = resolve(outdir, "servers");
const serversBuilt = bundleServers(servers);
await build({
  entryPoints: entries.map((e) => resolve(root, e)),
  outdir,
  outbase: root,
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: "inline",
  logLevel: "warning",
  plugins: [keepMetaUrl],
});

/** Runs `npm run NAME` with its output held; resolves with what to report. */
function runCheck(name) {
  return new Promise((done) => {
    const started = Date.now();
    const c = spawn("npm", ["run", "--silent", name], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    running.add(c);
    let out = "";
    c.stdout.on("data", (d) => {
      out += d;
    });
    c.stderr.on("data", (d) => {
      out += d;
    });
    c.on("error", (e) => {
      out += String(e);
    });
    c.on("close", (code) => {
      running.delete(c);
      done({ name, ok: code === 0, out, ms: Date.now() - started });
    });
  });
}

await serversBuilt;
process.env.TETHER_FLEET_BUNDLES = servers;

const bundles = entries.map((e) => relative(root, resolve(outdir, e)).replace(/\.[cm]?ts$/, ".js"));
const reporter = resolve(root, "test/helpers/matrix-reporter.mjs");
const tests = spawn(
  process.execPath,
  [
    "--enable-source-maps",
    "--test",
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${timeout}`,
    "--test-reporter=tap",
    "--test-reporter-destination=stdout",
    `--test-reporter=${reporter}`,
    "--test-reporter-destination=stderr",
    ...bundles,
  ],
  { cwd: root, stdio: "inherit" },
);
running.add(tests);
testing = true;
const testsOk = await new Promise((done) => tests.on("exit", (code) => done(code === 0)));
let ok = testsOk;
for (const r of await Promise.all(checkRuns)) {
  if (r.ok) {
    console.error(`check ${r.name}: passed in ${(r.ms / 1000).toFixed(1)} s`);
  } else {
    ok = false;
    console.error(`check ${r.name}: FAILED\n${r.out}`);
  }
}
process.exit(ok ? 0 : 1);
