// The whole suite CI runs (`npm test`, then `npm run test:long`) three times over while two busy
// processes of our own keep every core of a two-core machine occupied: a check that no test
// depends on an idle machine. Not part of CI (it takes a quarter of an hour or more).
//
//   npm run test:stress              # three runs, two burners
//   STRESS_RUNS=1 STRESS_BURNERS=4 npm run test:stress
//
// Prints each run's duration and outcome, keeps each run's full output in a log file, and exits
// 1 if any run failed. The burners and the run in progress are stopped whenever this script
// ends: normally, on a failure, on Ctrl-C or SIGTERM. A burner also stops by itself if this
// script is killed outright (its stdin ends), so none is ever left spinning.

import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const RUNS = positive(process.env.STRESS_RUNS, 3);
const BURNERS = positive(process.env.STRESS_BURNERS, 2);
/** The commands CI runs, in order (see .ci/run), each in its own process group. */
const SUITE = [
  ["npm", ["test"]],
  ["npm", ["run", "test:long"]],
];

/**
 * Spins in slices of 50 ms; between slices its event loop sees its stdin, a pipe from this script,
 * end when this script is gone, however it ended (even SIGKILL), and then it exits.
 */
const BURNER_SOURCE = `
process.stdin.on("end", () => process.exit(0)).on("error", () => process.exit(0)).resume();
(function spin() {
  const until = Date.now() + 50;
  while (Date.now() < until) {}
  setImmediate(spin);
})();
`;

function positive(value, fallback) {
  const n = Number(value ?? fallback);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`stress: ${value} is not a positive integer\n`);
    process.exit(2);
  }
  return n;
}

const burners = [];
/** The test command running now, if any: a process group leader. */
let current;
let stopping = false;

function startBurners() {
  for (let i = 0; i < BURNERS; i++) {
    const burner = spawn(process.execPath, ["-e", BURNER_SOURCE], { stdio: ["pipe", "ignore", "ignore"] });
    burners.push(burner);
  }
}

/** Stops the burners and the run in progress (its whole process group); safe to call twice. */
function stopAll() {
  for (const b of burners) if (b.exitCode === null && b.signalCode === null) b.kill("SIGKILL");
  if (current && current.exitCode === null && current.signalCode === null) {
    try {
      process.kill(-current.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  }
}

process.on("exit", stopAll);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\nstress: ${signal}: stopping the burners and the run in progress\n`);
    stopAll();
    process.exit(130);
  });
}
process.on("uncaughtException", (error) => {
  process.stderr.write(`stress: ${error?.stack ?? error}\n`);
  stopAll();
  process.exit(1);
});

/** Runs one command to its end, output appended to `log`; resolves with its exit status. */
function run(command, args, log) {
  return new Promise((resolve) => {
    // Its own process group (detached), so stopping it stops every server and child it started.
    current = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
    current.stdout.pipe(log, { end: false });
    current.stderr.pipe(log, { end: false });
    current.on("close", (code, signal) => {
      current = undefined;
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

/** The "tests: N passed, N failed, N skipped" totals the fault-matrix reporter printed last. */
function totals(text) {
  return [...text.matchAll(/^tests: .*$/gm)].map((m) => m[0].slice("tests: ".length));
}

/** Names of failed tests in a TAP log. */
function failures(text) {
  return [...new Set([...text.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]))];
}

const dir = mkdtempSync(join(tmpdir(), "tether-stress-"));
process.stdout.write(
  `stress: ${RUNS} run(s) of ${SUITE.map(([c, a]) => [c, ...a].join(" ")).join(" && ")}, ` +
    `${BURNERS} burner(s) busy; logs in ${dir}\n`,
);
startBurners();
let failedRuns = 0;
for (let n = 1; n <= RUNS; n++) {
  const file = join(dir, `run-${n}.log`);
  const log = createWriteStream(file);
  const started = performance.now();
  const parts = [];
  let ok = true;
  for (const [command, args] of SUITE) {
    const partStarted = performance.now();
    const status = await run(command, args, log);
    const s = ((performance.now() - partStarted) / 1000).toFixed(0);
    const outcome = status === 0 ? "passed" : `FAILED (exit ${status})`;
    parts.push(`${[command, ...args].join(" ")} ${outcome} in ${s} s`);
    if (status !== 0) ok = false;
  }
  await new Promise((resolve) => log.end(resolve));
  const text = readFileSync(file, "utf8");
  const seconds = (performance.now() - started) / 1000;
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  process.stdout.write(
    `run ${n}/${RUNS}: ${ok ? "PASS" : "FAIL"} in ${m} m ${String(s).padStart(2, "0")} s` +
      ` (${parts.join("; ")}; tests: ${totals(text).join(" / ") || "no totals"})\n`,
  );
  if (!ok) {
    failedRuns++;
    const names = failures(text);
    for (const name of names.slice(0, 20)) process.stdout.write(`  not ok: ${name}\n`);
    // No failed test named: the build, type check or lint stopped the run first.
    if (names.length === 0) {
      const tail = text.split("\n").filter((l) => l.trim() !== "").slice(-8);
      for (const l of tail) process.stdout.write(`  | ${l}\n`);
    }
    process.stdout.write(`  log: ${file}\n`);
  }
}
stopAll();
process.stdout.write(`stress: ${RUNS - failedRuns} of ${RUNS} run(s) passed\n`);
process.exit(failedRuns === 0 ? 0 : 1);
