// How many runs each property gets, and from which seed. In `npm test` every property runs a
// small, fixed number of times from one fixed seed, so a failure reproduces exactly. The long run
// (test/fuzz/long.mjs) sets FUZZ_RUNS and FUZZ_SEED to run the same properties much longer from a
// fresh seed; a failure there is replayed with the same two variables.
//
// fast-check prints the seed, the shrink path and the counterexample of any failure; replaying
// with that seed and the same FUZZ_RUNS walks the same sequence of inputs.

import type { Parameters } from "fast-check";

/** The seed of every property in `npm test`. */
export const DEFAULT_SEED = 20261129;

function intFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

const envRuns = intFromEnv("FUZZ_RUNS");
const envSeed = intFromEnv("FUZZ_SEED");

export const SEED = envSeed ?? DEFAULT_SEED;

/**
 * Runs for one property: `defaultRuns` in `npm test`. Under FUZZ_RUNS, that many divided by the
 * property's `cost` (how many times dearer one run is than a pure parser run: a run that spawns a
 * process costs about 20), and never fewer than the default.
 */
export function runs(defaultRuns: number, cost = 1): number {
  if (envRuns === undefined) return defaultRuns;
  return Math.max(defaultRuns, Math.ceil(envRuns / cost));
}

/** fast-check parameters: the shared seed and the property's number of runs. */
export function fuzz<Ts>(defaultRuns: number, cost = 1): Parameters<Ts> {
  return { seed: SEED, numRuns: runs(defaultRuns, cost), includeErrorInReport: true };
}
