import type { spawn } from "node:child_process";
import type { Clock } from "../lifecycle/clock.ts";

/** The fetch every HTTP request goes through: the global one unless the caller brings its own. */
export type FetchFn = typeof fetch;

/** Starts a stdio server's process: node's `spawn` unless the caller brings its own. */
export type SpawnFn = typeof spawn;

/** Platform seams; real ones by default. Tests pass fakes here instead of patching globals. */
export interface Deps {
  fetch?: FetchFn;
  spawn?: SpawnFn;
  clock?: Clock;
}
