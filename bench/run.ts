// `npm run bench`: tether against the official MCP clients, measured in the same run on the same
// machine. Prints one table (medians with min–max, the ratio, the target, met or not) and writes
// bench/results.json. See docs/benchmarks.md for what each section measures and why.
//
//   npm run bench                    every section (about 4 minutes on 2 cores)
//   npm run bench -- --only=1,3      some sections
//   npm run bench -- --quick         fewer repetitions, for checking the harness itself
//   npm run bench -- --keep-env      keep NODE_EXTRA_CA_CERTS for child processes (see below)

import { spawnSync } from "node:child_process";
import { setMaxListeners } from "node:events";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { startFleet } from "./lib/fleet.ts";
import { type Row, renderTable } from "./lib/report.ts";
import { autoDetectSection } from "./sections/auto-detect.ts";
import { bridgeSection } from "./sections/bridge.ts";
import { cliSection } from "./sections/cli-start.ts";
import { establishSection } from "./sections/establish.ts";
import { inspectSection } from "./sections/inspect.ts";
import { memorySection } from "./sections/memory.ts";
import { sessionsSection } from "./sections/sessions.ts";
import { throughputSection } from "./sections/throughput.ts";
import { validationSection } from "./sections/validation.ts";

const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const keepEnv = argv.includes("--keep-env");
const onlyArg = argv.find((a) => a.startsWith("--only="));
const only = onlyArg ? new Set(onlyArg.slice("--only=".length).split(",")) : undefined;
const wanted = (n: string) => only === undefined || only.has(n);

const config = {
  establish: quick ? { httpRuns: 5, stdioRuns: 3, warmup: 1 } : { httpRuns: 60, stdioRuns: 20, warmup: 3 },
  cli: quick ? { runs: 3 } : { runs: 20 },
  throughput: quick
    ? { repeats: 2, sequentialCalls: 100, concurrency: 32, callsPerWorker: 5, warmupCalls: 10 }
    : { repeats: 9, sequentialCalls: 300, concurrency: 32, callsPerWorker: 30, warmupCalls: 50 },
  validation: quick ? { repeats: 2, calls: 300 } : { repeats: 8, calls: 2000 },
  memory: {
    repeats: quick ? 1 : 4,
    replyBytes: 200_000_000,
    smallCeilingBytes: 1024 * 1024,
    largeCeilingBytes: 256 * 1024 * 1024,
  },
  autoDetect: quick ? { runs: 5, warmup: 1 } : { runs: 60, warmup: 3 },
};

/** The commit measured, and whether src/ had uncommitted changes (the figures are of the tree as it was). */
function revision(): { commit: string; srcChanges: number } {
  const git = (...args: string[]) => spawnSync("git", args, { encoding: "utf8" }).stdout?.trim() ?? "";
  return {
    commit: git("rev-parse", "--short", "HEAD") || "unknown",
    srcChanges: git("status", "--porcelain", "--", "src").split("\n").filter(Boolean).length,
  };
}
const tree = revision();

const machine = {
  nproc: availableParallelism(),
  cpu: cpus()[0]?.model ?? "unknown",
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
};

const log = (text: string) => process.stderr.write(`bench: ${text}\n`);

// NODE_EXTRA_CA_CERTS makes every Node process parse a CA bundle at boot (+40 ms each on the
// reference machine). The official stdio transports spawn servers with a small default
// environment that drops it, ours passes the whole environment, and the CLI section boots several
// Node processes per run: left in, it measures the machine's certificate setup rather than the
// clients. Removed here, for every child this process starts, unless --keep-env.
const strippedEnv: string[] = [];
if (!keepEnv && process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  delete process.env.NODE_EXTRA_CA_CERTS;
  strippedEnv.push("NODE_EXTRA_CA_CERTS");
}

// The official HTTP clients hand one connection-wide AbortSignal to every fetch, and undici's
// listeners on it pile up with each call (1,500+ after ~1,700 calls); the default limit would
// flood this report with MaxListenersExceededWarning. Ours links a fresh signal per request.
setMaxListeners(100_000);
const started = performance.now();
const rows: Row[] = [];
const details: Record<string, unknown> = {};
const warnings: string[] = [];

async function section(n: string, title: string, body: () => Promise<void>): Promise<void> {
  if (!wanted(n)) return;
  const t = performance.now();
  log(`§${n} ${title}…`);
  await body();
  log(`§${n} done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

const loadBefore = loadavg()[0]!;
log(
  `${machine.nproc} cores (${machine.cpu}), Node ${machine.node}, load average ${loadBefore.toFixed(2)}${quick ? ", quick mode" : ""}`,
);
if (strippedEnv.length > 0) log(`unset for child processes: ${strippedEnv.join(", ")} (--keep-env keeps it)`);
if (loadBefore > machine.nproc / 2)
  log(
    `warning: the machine is busy (load ${loadBefore.toFixed(2)} on ${machine.nproc} cores); figures will be noisy`,
  );

const needsFleet = ["1", "3", "5"].some(wanted);
const fleet = needsFleet
  ? await startFleet([
      "legacy-sse-2024-11-05",
      "streamable-2025-06-18",
      "streamable-2025-11-25-sse",
      "streamable-2025-11-25-json",
      "modern-2026-07-28",
      "legacy-stdio",
      "modern-stdio",
    ])
  : undefined;
try {
  await section("1", "establishment + tool listing", async () => {
    rows.push(...(await establishSection(fleet!, config.establish)));
  });
  await section("2", "cold CLI start", async () => {
    const r = await cliSection(config.cli);
    if (r.stale) warnings.push(r.stale);
    rows.push(...r.rows);
  });
  await section("3", "call throughput", async () => {
    rows.push(...(await throughputSection(fleet!, config.throughput)));
    rows.push(...(await validationSection(config.validation)));
  });
  await section("4", "memory under a 200 MB reply", async () => {
    const r = await memorySection(config.memory);
    details.memory = r.samples;
    rows.push(...r.rows);
  });
  await section("5", "auto-detection cost", async () => {
    rows.push(...(await autoDetectSection(fleet!, config.autoDetect)));
  });
  await section("6", "calls through a session", async () => {
    rows.push(...(await sessionsSection({ runs: quick ? 5 : 20 })));
  });
  await section("7", "the bridge", async () => {
    rows.push(
      ...(await bridgeSection({
        repeats: quick ? 1 : 5,
        calls: quick ? 50 : 1000,
        replyBytes: 200_000_000,
        ceilingBytes: 1024 * 1024,
      })),
    );
  });
  await section("8", "the web explorer", async () => {
    rows.push(...(await inspectSection(quick ? { launches: 3, calls: 50 } : { launches: 10, calls: 300 })));
  });
} finally {
  await fleet?.close();
}

const durationS = (performance.now() - started) / 1000;
const loadAfter = loadavg()[0]!;
const table = renderTable(rows);
process.stdout.write(
  `\ntether benchmarks at ${tree.commit}${tree.srcChanges ? ` (+${tree.srcChanges} uncommitted src/ changes)` : ""}: ${machine.nproc} cores, ${machine.cpu}, Node ${machine.node}, ${machine.platform}; ${durationS.toFixed(0)} s; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after\n\n${table}\n`,
);
for (const w of warnings) process.stdout.write(`\nwarning: ${w}\n`);
const met = rows.filter((r) => r.target?.met).length;
const judged = rows.filter((r) => r.target).length;
process.stdout.write(`\ntargets met: ${met} of ${judged}\n`);

const resultsFile = fileURLToPath(new URL("./results.json", import.meta.url));
writeFileSync(
  resultsFile,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine,
      tree,
      load: { before: loadBefore, after: loadAfter },
      strippedEnv,
      config,
      durationS,
      quick,
      warnings,
      rows,
      details,
    },
    null,
    2,
  )}\n`,
);
// `npm run lint` checks bench/** and does not read .gitignore, so the results file is written in
// the formatter's own layout; otherwise every lint after a bench run would fail on it.
const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
const formatted = spawnSync(process.execPath, [biome, "format", "--write", resultsFile], {
  encoding: "utf8",
});
if (formatted.status !== 0) log(`warning: could not format ${resultsFile}: ${formatted.stderr.trim()}`);
log(`wrote ${resultsFile}`);
