// `npm run soak`: thousands of short-lived clients against the example servers of every
// transport, then one long-lived client per server with more calls at once than it has slots,
// while this process watches its own resident memory, heap, file descriptors, active handles,
// child processes and the abort listeners on the application's signal. Fails (exit 1, with the
// figures) if any of them grows without bound. Not part of `npm test`; see docs/reliability.md.
//
//   npm run soak                                   defaults: 7 to 8 minutes on 2 cores
//   SOAK_CYCLES=500 npm run soak                   a quick pass (stdio and rounds scale with it)
//
// Environment (whole numbers):
//   SOAK_CYCLES        cycles per HTTP transport (default 5000)
//   SOAK_STDIO_CYCLES  cycles per stdio transport (default SOAK_CYCLES / 5: each one spawns a
//                      Node server, about 0.2 s of CPU, so stdio runs far fewer in the same time)
//   SOAK_ROUNDS        long-lived rounds per server, 32 calls each (default SOAK_CYCLES / 50)
//   SOAK_VERBOSE=1     print every check, not only the failed ones

import { setMaxListeners } from "node:events";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { MemoryEraHints } from "../src/index.ts";
import { type Check, count, exactCheck, growthCheck, MIN_SAMPLES, MiB, mib, trendCheck } from "./growth.ts";
import {
  checkLines,
  figures,
  handleSummary,
  type PhaseResult,
  sampleLine,
  summaryTable,
  trendTable,
} from "./report.ts";
import { differencesFrom, Probe, type Sample } from "./resources.ts";
import {
  ABANDON_EVERY,
  DETECT_EVERY,
  LONG_CALLS_PER_ROUND,
  LONG_MAX_IN_FLIGHT,
  runCycles,
  runLongLived,
  type Tally,
  type Target,
} from "./workloads.ts";

// ---------------------------------------------------------------- configuration

function whole(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < MIN_SAMPLES) {
    throw new Error(`${name} must be a whole number of at least ${MIN_SAMPLES}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

const httpCycles = whole("SOAK_CYCLES", 5_000);
const config = {
  httpCycles,
  stdioCycles: whole("SOAK_STDIO_CYCLES", Math.max(MIN_SAMPLES, Math.round(httpCycles / 5))),
  rounds: whole("SOAK_ROUNDS", Math.max(MIN_SAMPLES, Math.round(httpCycles / 50))),
  /** Short-lived clients at once; a stdio cycle spends most of its time spawning a server. */
  httpConcurrency: 4,
  stdioConcurrency: 3,
  /** Samples per cycle phase (a full collection each). */
  samplesPerPhase: 40,
  verbose: process.env.SOAK_VERBOSE === "1",
};

/**
 * The bounds. Resident memory moves with V8's heap sizing and the allocator, so it gets room;
 * the heap is measured after a full collection, so it gets little. Counts that only hold what
 * is open now (descriptors, handles, children, listeners) must come back exactly once a phase
 * is over; between batches only the shared keep-alive pool may differ.
 */
const BOUNDS = {
  /** A phase's resident memory, second quarter's median to last quarter's. */
  phaseRssBytes: 16 * MiB,
  /** A phase's live heap, the same way. */
  phaseHeapBytes: 4 * MiB,
  /** The whole run: resident memory after the last phase against the baseline after warm-up. */
  runRssBytes: 30 * MiB,
  runHeapBytes: 8 * MiB,
  /** How long a finished phase's keep-alive sockets and exiting children may take to go. */
  settleMs: 15_000,
  /** Stop everything if the run takes longer than this. */
  runMs: 30 * 60_000,
  /** After the last close, the process must exit by itself within this (C9). */
  exitMs: 10_000,
};

// ---------------------------------------------------------------- environment

const machine = {
  nproc: availableParallelism(),
  cpu: cpus()[0]?.model ?? "unknown",
  node: process.version,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
};

interface FleetModule {
  startFleet(options: { only: readonly string[] }): Promise<{
    servers: { name: string; transport: "streamable-http" | "sse"; url: string }[];
    stdio: { name: string; command: string; args: string[] }[];
    close(): Promise<void>;
  }>;
}
// A computed specifier: the example is plain JS without declarations, typed by FleetModule above.
const { startFleet } = (await import(new URL("../examples/fleet.mjs", import.meta.url).href)) as FleetModule;

const out = (line = "") => process.stdout.write(`${line}\n`);

const watchdog = setTimeout(() => {
  out(`soak: FAIL: the run took longer than ${BOUNDS.runMs / 60_000} minutes`);
  process.exit(1);
}, BOUNDS.runMs);
watchdog.unref();

// ---------------------------------------------------------------- the run

/** The application's signal: given to every connect and call, never aborted. */
const app = new AbortController();
// One listener per call in flight is expected; that they are all removed is checked below.
setMaxListeners(1_000, app.signal);
const probe = new Probe(app.signal);

/**
 * Process warnings (a MaxListenersExceededWarning is Node's own leak alarm), by the phase they
 * came in, with the first two frames of ours in their stack. Node still prints them as usual.
 */
const warnings: { phase: string; text: string }[] = [];
let currentPhase = "start-up";
process.on("warning", (warning) => {
  const ours = (warning.stack ?? "")
    .split("\n")
    .filter((line) => /[/\\](src|soak)[/\\]/.test(line))
    .slice(0, 2)
    .map((line) => line.trim().replace(/^at /, "").replace(`${process.cwd()}/`, ""));
  const at = ours.length > 0 ? ` (at ${ours.join(", called from ")})` : "";
  warnings.push({ phase: currentPhase, text: `${warning.name}: ${warning.message}${at}` });
});
const hints = new MemoryEraHints();

const HTTP_NAMES = [
  "legacy-sse-2024-11-05",
  "streamable-2025-11-25-json",
  "streamable-2025-11-25-sse",
  "modern-2026-07-28",
] as const;
const STDIO_NAMES = ["legacy-stdio", "modern-stdio"] as const;

out(
  `soak: ${machine.nproc} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
out(
  `soak: ${config.httpCycles} cycles per HTTP transport (${config.httpConcurrency} at once), ` +
    `${config.stdioCycles} per stdio transport (${config.stdioConcurrency} at once), ` +
    `${config.rounds} long-lived rounds of ${LONG_CALLS_PER_ROUND} calls on ${LONG_MAX_IN_FLIGHT} slots; ` +
    `1 cycle in ${DETECT_EVERY} detects in full, 1 in ${ABANDON_EVERY} closes with a call in flight`,
);

const before = probe.sample();
const fleet = await startFleet({ only: [...HTTP_NAMES, ...STDIO_NAMES] });
const targets: Target[] = [
  ...HTTP_NAMES.map((name) => {
    const s = fleet.servers.find((x) => x.name === name)!;
    return { name, transport: s.transport, endpoint: { url: s.url } } satisfies Target;
  }),
  ...STDIO_NAMES.map((name) => {
    const s = fleet.stdio.find((x) => x.name === name)!;
    return { name, transport: "stdio", endpoint: { command: s.command, args: s.args } } satisfies Target;
  }),
];

const results: PhaseResult[] = [];
let failed = false;
try {
  // Warm-up: every path once, so one-time allocations (JIT, the fetch pool, lazy modules) are in
  // the baseline rather than counted as growth.
  out("soak: warming up");
  currentPhase = "warm-up";
  for (const target of targets) {
    const stdio = target.transport === "stdio";
    const warm = await runCycles(target, {
      cycles: stdio ? ABANDON_EVERY : 2 * ABANDON_EVERY,
      concurrency: stdio ? config.stdioConcurrency : config.httpConcurrency,
      batch: ABANDON_EVERY,
      hints,
      signal: app.signal,
      between: () => {},
    });
    const warmLong = await runLongLived(target, { rounds: 2, hints, signal: app.signal, between: () => {} });
    for (const [what, tally] of [
      ["cycles", warm],
      ["long-lived", warmLong],
    ] as const) {
      if (tally.failures > 0)
        throw new Error(`warm-up ${what} ${target.name} failed: ${tally.failureSamples.join("; ")}`);
    }
  }
  const warmed = await probe.settle(before, BOUNDS.settleMs);
  const baseline = warmed.sample;
  out(`soak: before the fleet: ${figures(before)}`);
  out(`soak: baseline after warm-up: ${figures(baseline)}`);
  out(
    `soak: the fleet's ${baseline.children - before.children} servers are in the baseline` +
      (warmed.differences.length > 0 ? `; compared with before: ${warmed.differences.join(", ")}` : ""),
  );

  let start = baseline;
  for (const target of targets) {
    const stdio = target.transport === "stdio";
    const cycles = stdio ? config.stdioCycles : config.httpCycles;
    const concurrency = stdio ? config.stdioConcurrency : config.httpConcurrency;
    const result = await phase(`cycles ${target.name}`, start, baseline, {
      units: cycles,
      unitName: "cycles",
      tolerance: 2 * concurrency + 2,
      heldChildren: 0,
      run: (between) =>
        runCycles(target, {
          cycles,
          concurrency,
          batch: Math.ceil(cycles / config.samplesPerPhase),
          hints,
          signal: app.signal,
          between,
        }),
    });
    results.push(result);
    start = result.end;
  }
  for (const target of targets) {
    const result = await phase(`long-lived ${target.name}`, start, baseline, {
      units: config.rounds * LONG_CALLS_PER_ROUND,
      unitName: "calls",
      // Between rounds the pool may keep a socket per slot, some still closing.
      tolerance: 2 * LONG_MAX_IN_FLIGHT + 2,
      heldChildren: target.transport === "stdio" ? 1 : 0,
      run: (between) => runLongLived(target, { rounds: config.rounds, hints, signal: app.signal, between }),
    });
    results.push(result);
    start = result.end;
  }

  const end = start;
  const run: PhaseResult = {
    name: "whole run",
    units: results.reduce((n, r) => n + r.units, 0),
    unitName: "cycles + calls",
    durationMs: results.reduce((n, r) => n + r.durationMs, 0),
    start: baseline,
    end,
    samples: [],
    tally: { ok: 0, kinds: {}, failures: 0, failureSamples: [] },
    checks: [
      growthCheck("rss, baseline to end", baseline.rssBytes, end.rssBytes, BOUNDS.runRssBytes, mib),
      growthCheck(
        "heapUsed, baseline to end",
        baseline.heapUsedBytes,
        end.heapUsedBytes,
        BOUNDS.runHeapBytes,
        mib,
      ),
      warningCheck(warnings),
      {
        name: "fds, handles, children back to baseline",
        ok: differencesFrom(baseline, end).length === 0,
        detail: differencesFrom(baseline, end).join(", ") || figures(end),
      },
    ],
  };
  results.push(run);

  out();
  out(summaryTable(results));
  out();
  out(trendTable(results));
  out();
  for (const r of results.slice(0, -1)) out(`${r.name}: ${tallyLine(r)}`);
  const lines = checkLines(results, config.verbose);
  failed = results.some((r) => r.checks.some((c) => !c.ok));
  if (lines.length > 0) {
    out();
    for (const line of lines) out(line);
  }
  out();
  out(`soak: end: ${figures(end)}`);
} catch (error) {
  failed = true;
  out(`soak: FAIL: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  await fleet.close();
}

out(`soak: ${failed ? "FAIL" : "all bounds held"} (${(probe.elapsedMs / 60_000).toFixed(1)} minutes in all)`);
process.exitCode = failed ? 1 : 0;
clearTimeout(watchdog);
// C9: nothing of ours may keep the process alive now. If this timer fires, something did.
setTimeout(() => {
  out(`soak: FAIL: still alive ${BOUNDS.exitMs} ms after the last close: ${handleSummary(activeNow())}`);
  process.exit(1);
}, BOUNDS.exitMs).unref();

// ---------------------------------------------------------------- helpers

function activeNow(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

function warningCheck(list: { phase: string; text: string }[]): Check {
  const distinct = new Map<string, number>();
  for (const w of list) {
    const key = `${w.text} [${w.phase}]`;
    distinct.set(key, (distinct.get(key) ?? 0) + 1);
  }
  return {
    name: "process warnings",
    ok: list.length === 0,
    detail:
      list.length === 0
        ? "none"
        : [...distinct].map(([text, n]) => (n > 1 ? `${n} × ${text}` : text)).join("; "),
  };
}

function tallyLine(r: PhaseResult): string {
  const kinds = Object.entries(r.tally.kinds)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  const rate = r.units / (r.durationMs / 1000);
  return `${r.tally.ok} as expected (${kinds}), ${r.tally.failures} unexpected; ${rate.toFixed(0)} ${r.unitName}/s`;
}

interface PhaseSpec {
  units: number;
  unitName: "cycles" | "calls";
  /** How far descriptors and handles may drift between batches (the keep-alive pool). */
  tolerance: number;
  /** Children the phase itself holds between batches (a long-lived stdio server). */
  heldChildren: number;
  run: (between: (done: number) => void) => Promise<Tally>;
}

async function phase(name: string, start: Sample, baseline: Sample, spec: PhaseSpec): Promise<PhaseResult> {
  const samples: Sample[] = [];
  const began = performance.now();
  currentPhase = name;
  let printed = 0;
  const tally = await spec.run((done) => {
    const s = probe.sample();
    samples.push(s);
    // About ten lines a phase.
    const total = spec.unitName === "cycles" ? spec.units : spec.units / LONG_CALLS_PER_ROUND;
    const shown = spec.unitName === "cycles" ? done : done * LONG_CALLS_PER_ROUND;
    if (done === total || done * 10 >= (printed + 1) * total) {
      printed++;
      out(sampleLine(name, `${shown}/${spec.units}`, s));
    }
  });
  const durationMs = performance.now() - began;
  const settled = await probe.settle(baseline, BOUNDS.settleMs);
  const end = settled.sample;
  out(sampleLine(name, "settled", end));

  const checks: Check[] = [
    {
      name: "outcomes",
      ok: tally.failures === 0 && tally.ok === spec.units,
      detail:
        `${tally.ok} of ${spec.units} as expected, ${tally.failures} unexpected` +
        (tally.failureSamples.length > 0 ? `: ${tally.failureSamples.join("; ")}` : ""),
    },
    trendCheck(
      "rss trend",
      samples.map((s) => s.rssBytes),
      BOUNDS.phaseRssBytes,
      mib,
    ),
    trendCheck(
      "heapUsed trend",
      samples.map((s) => s.heapUsedBytes),
      BOUNDS.phaseHeapBytes,
      mib,
    ),
    trendCheck(
      "fds trend",
      samples.map((s) => s.fds),
      spec.tolerance,
      count,
    ),
    trendCheck(
      "handles trend",
      samples.map((s) => s.handleTotal),
      spec.tolerance,
      count,
    ),
    exactCheck(
      "children between batches",
      samples.map((s) => s.children),
      baseline.children + spec.heldChildren,
    ),
    exactCheck(
      "abort listeners left on the caller's signal between batches",
      samples.map((s) => s.signalListeners),
      0,
    ),
    warningCheck(warnings.filter((w) => w.phase === name)),
    {
      name: "back to baseline after the phase",
      ok: settled.ok,
      detail: settled.ok
        ? `fds, handles and children exact after ${Math.round(settled.waitedMs)} ms`
        : `after ${Math.round(settled.waitedMs)} ms: ${settled.differences.join(", ")}`,
    },
  ];
  return { name, units: spec.units, unitName: spec.unitName, durationMs, start, end, samples, tally, checks };
}
