// The long fuzz run, on demand:
//
//   node test/fuzz/long.mjs                      # FUZZ_RUNS=20000, a fresh random seed
//   FUZZ_RUNS=100000 node test/fuzz/long.mjs     # longer
//   FUZZ_SEED=12345 node test/fuzz/long.mjs      # replay a seed printed by an earlier run
//   node test/fuzz/long.mjs test/fuzz/sse-reader.test.ts   # only some files
//
// It reruns the same properties as `npm test` (test/fuzz/*.test.ts) with FUZZ_RUNS runs for each
// pure property (properties that spawn processes or parse 100k-deep nesting scale down by their
// cost; see fuzz-config.ts) and the seed printed below. A failure prints fast-check's seed, shrink
// path and counterexample; rerun with the same FUZZ_SEED and FUZZ_RUNS to reproduce it.

import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const runs = process.env.FUZZ_RUNS || "20000";
const seed = process.env.FUZZ_SEED || String(Math.floor(Math.random() * 2 ** 31));
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(here)
        .filter((f) => f.endsWith(".test.ts"))
        .sort()
        .map((f) => relative(root, join(here, f)));

process.stdout.write(`fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}\nfuzz: ${files.join(" ")}\n`);
const started = performance.now();
const child = spawn(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...files],
  { cwd: root, stdio: "inherit", env: { ...process.env, FUZZ_RUNS: runs, FUZZ_SEED: seed } },
);
child.on("exit", (code, signal) => {
  const s = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    `fuzz: ${code === 0 ? "passed" : "FAILED"} in ${s} s; replay with FUZZ_SEED=${seed} FUZZ_RUNS=${runs}\n`,
  );
  process.exit(code ?? (signal ? 1 : 0));
});
