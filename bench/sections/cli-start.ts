// §2 Cold CLI start: `tether tools -- node <legacy stdio server>` as a whole process, against a
// no-library floor doing the same exchange over raw pipes and a minimal official (v1) script.
// Then the same against the reference server-everything, which takes a while to exit once its stdin
// ends: the first byte on stdout (when a reader has the result) and the exit are timed apart, and
// the CPU of the whole process tree (client and server) is counted.

import { mkdtempSync, rmSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { interleave } from "../lib/interleave.ts";
import { type ProcessRun, timeProcess } from "../lib/processes.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
/** The built CLI: dist/tether.mjs, or another build named by TETHER_BENCH_CLI (built with scripts/bundle-cli.mjs). */
const BIN = process.env.TETHER_BENCH_CLI ?? root("dist/tether.mjs");
const SERVER = root("examples/servers/legacy-stdio.mjs");
const FLOOR = root("bench/scripts/floor-stdio.mjs");
const OFFICIAL = root("bench/scripts/official-v1-tools.mjs");
const EVERYTHING = root("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

export interface CliConfig {
  runs: number;
}

/** Whether dist/ is older than the newest source file: the CLI figures would then be of old code. */
async function distStaleness(): Promise<string | undefined> {
  let bin: number;
  try {
    bin = statSync(BIN).mtimeMs;
  } catch {
    throw new Error(`bench: ${BIN} is missing; run \`npm run build\` first`);
  }
  const newer: string[] = [];
  for (const entry of await readdir(root("src"), { recursive: true })) {
    const file = String(entry);
    if (!file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
    if (statSync(join(root("src"), file)).mtimeMs > bin) newer.push(file);
  }
  return newer.length > 0
    ? `${BIN} is older than ${newer.length} source file(s) (${newer.slice(0, 3).join(", ")}); run \`npm run build\` for current figures`
    : undefined;
}

function checked(run: ProcessRun, what: string): ProcessRun {
  if (run.code !== 0 || !run.stdout.includes("echo")) {
    throw new Error(`bench: ${what} failed (exit ${run.code}): ${run.stderr.slice(-500)}`);
  }
  return run;
}

export async function cliSection(cfg: CliConfig): Promise<{ rows: Row[]; stale?: string }> {
  const stale = await distStaleness();
  const node = process.execPath;
  const warmDir = mkdtempSync(join(tmpdir(), "tether-bench-warm-"));
  const coldDirs: string[] = [];
  const env = (dir: string) => ({ ...process.env, TETHER_CACHE_DIR: dir });
  try {
    // The warm cache gets its hint from one uncounted run.
    checked(
      await timeProcess(node, [BIN, "tools", "--", node, SERVER], { env: env(warmDir) }),
      "tether (warm-up)",
    );
    const r = await interleave(
      {
        cold: async () => {
          const dir = mkdtempSync(join(tmpdir(), "tether-bench-cold-"));
          coldDirs.push(dir);
          return checked(
            await timeProcess(node, [BIN, "tools", "--", node, SERVER], { env: env(dir) }),
            "tether cold",
          );
        },
        warm: async () =>
          checked(
            await timeProcess(node, [BIN, "tools", "--", node, SERVER], { env: env(warmDir) }),
            "tether warm",
          ),
        floor: async () => checked(await timeProcess(node, [FLOOR, node, SERVER]), "floor script"),
        official: async () => checked(await timeProcess(node, [OFFICIAL, node, SERVER]), "official script"),
        everythingCold: async () => {
          const dir = mkdtempSync(join(tmpdir(), "tether-bench-cold-"));
          coldDirs.push(dir);
          return checked(
            await timeProcess(node, [BIN, "tools", "--", node, EVERYTHING, "stdio"], {
              env: env(dir),
              cpu: true,
            }),
            "tether cold (server-everything)",
          );
        },
        everythingFloor: async () =>
          checked(await timeProcess(node, [FLOOR, node, EVERYTHING, "stdio"], { cpu: true }), "floor script"),
        everythingOfficial: async () =>
          checked(
            await timeProcess(node, [OFFICIAL, node, EVERYTHING, "stdio"], { cpu: true }),
            "official script",
          ),
        // What the two processes cost before any MCP: Node booting, then our CLI's module graph.
        nodeBoot: () => timeProcess(node, ["-e", "0"]),
        cliBoot: () => timeProcess(node, [BIN, "--version"]),
      },
      { warmup: 1, runs: cfg.runs },
    );
    const s = (k: keyof typeof r) => summarize(r[k].map((x) => x.ms));
    const floor = s("floor");
    const official = s("official");
    const rows: Row[] = [];
    for (const [key, label] of [
      ["cold", "tether tools (cold: empty TETHER_CACHE_DIR)"],
      ["warm", "tether tools (warm era hint)"],
    ] as const) {
      const ours = s(key);
      const vsFloor = ours.median / floor.median;
      const vsOfficial = ours.median / official.median;
      rows.push(
        {
          section: "2",
          case: label,
          unit: "ms",
          ours,
          official: { label: "floor script (raw pipes)", summary: floor },
          ratio: vsFloor,
          target: { text: "≤ 1.25× floor", met: vsFloor <= 1.25 },
        },
        {
          section: "2",
          case: label,
          unit: "ms",
          ours,
          official: { label: "official v1 script", summary: official },
          floor,
          ratio: vsOfficial,
          target: { text: "≤ 0.5×", met: vsOfficial <= 0.5 },
        },
      );
    }
    const nodeBoot = s("nodeBoot");
    const cliBoot = s("cliBoot");
    rows.push(...everythingRows(r.everythingCold, r.everythingFloor, r.everythingOfficial));
    const bootRatio = cliBoot.median / nodeBoot.median;
    rows.push({
      section: "2",
      case: "process boot only: `node -e 0` / `tether --version`",
      unit: "ms",
      ours: cliBoot,
      official: { label: "node -e 0", summary: nodeBoot },
      ratio: bootRatio,
      target: { text: "≤ 1.5× node -e 0", met: bootRatio <= 1.5 },
      note: `the floor itself is ${(floor.median / official.median).toFixed(2)}× the official script, so ≤ 0.5× official is below what raw pipes achieve against this server; client-side cost over the floor: ours cold ${(s("cold").median - floor.median).toFixed(0)} ms, warm ${(s("warm").median - floor.median).toFixed(0)} ms, official ${(official.median - floor.median).toFixed(0)} ms`,
    });
    return { rows, stale };
  } finally {
    rmSync(warmDir, { recursive: true, force: true });
    for (const d of coldDirs) rmSync(d, { recursive: true, force: true });
  }
}

/**
 * `tether tools -- node <server-everything> stdio`, cold, against the raw-pipe floor and the v1
 * script: first stdout byte (a reader has the tool list), exit (the server is gone), and the CPU of
 * the whole tree. The floor prints before it closes the server's stdin, as the official script does.
 */
function everythingRows(ours: ProcessRun[], floor: ProcessRun[], official: ProcessRun[]): Row[] {
  const label = "tether tools -- server-everything (cold)";
  const pick = (runs: ProcessRun[], f: (r: ProcessRun) => number | undefined) =>
    summarize(runs.map(f).filter((v): v is number => v !== undefined && Number.isFinite(v)));
  const first = (r: ProcessRun) => r.firstStdoutMs;
  const exit = (r: ProcessRun) => r.ms;
  const cpu = (r: ProcessRun) => r.cpuMs;
  const rows: Row[] = [];
  const firstOurs = pick(ours, first);
  const firstFloor = pick(floor, first);
  const firstRatio = firstOurs.median / firstFloor.median;
  rows.push(
    {
      section: "2",
      case: `${label}: first stdout byte`,
      unit: "ms",
      ours: firstOurs,
      official: { label: "floor script (raw pipes)", summary: firstFloor },
      ratio: firstRatio,
      target: { text: "≤ 1.1× floor", met: firstRatio <= 1.1 },
    },
    {
      section: "2",
      case: `${label}: first stdout byte`,
      unit: "ms",
      ours: firstOurs,
      official: { label: "official v1 script", summary: pick(official, first) },
      floor: firstFloor,
      ratio: firstOurs.median / pick(official, first).median,
    },
    {
      section: "2",
      case: `${label}: exit`,
      unit: "ms",
      ours: pick(ours, exit),
      official: { label: "floor script (raw pipes)", summary: pick(floor, exit) },
      ratio: pick(ours, exit).median / pick(floor, exit).median,
      note: "exit waits for the server to be gone; the floor sends SIGTERM 500 ms after closing stdin, ours follows its own stdin → SIGTERM → SIGKILL grace",
    },
  );
  const cpuOurs = pick(ours, cpu);
  const cpuFloor = pick(floor, cpu);
  if (cpuOurs.n > 0 && cpuFloor.n > 0) {
    const cpuRatio = cpuOurs.median / cpuFloor.median;
    rows.push(
      {
        section: "2",
        case: `${label}: CPU, client + server`,
        unit: "ms",
        ours: cpuOurs,
        official: { label: "floor script (raw pipes)", summary: cpuFloor },
        ratio: cpuRatio,
        target: { text: "≤ 1.05× floor", met: cpuRatio <= 1.05 },
      },
      {
        section: "2",
        case: `${label}: CPU, client + server`,
        unit: "ms",
        ours: cpuOurs,
        official: { label: "official v1 script", summary: pick(official, cpu) },
        floor: cpuFloor,
        ratio: cpuOurs.median / pick(official, cpu).median,
      },
    );
  }
  return rows;
}
