// §6 Sessions: `tether call @NAME echo` through a live session against one-shot
// `tether call echo -- node <stdio server>`, each a whole process timed from spawn to exit. The
// session call pays Node's boot, its one small file and one request, but no spawn and no
// handshake; the one-shot call pays all of it. Node's own boot (`node -e 0`), `tether --help`
// (boot plus the CLI's module graph) and the floor (a bare script making the same one request on
// the session socket) run interleaved with it: what a session call costs beyond them is its own.
// Under Bun the same, and the compiled binary (bun build --compile, as qualify builds it, and with
// --bytecode) beside `bun -e 0`.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { interleave } from "../lib/interleave.ts";
import { type ProcessRun, timeProcess } from "../lib/processes.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const BIN = process.env.TETHER_BENCH_CLI ?? root("dist/tether.mjs");
const SERVER = root("examples/servers/legacy-stdio.mjs");
const FLOOR = root("bench/scripts/session-floor.mjs");
/** Bun, from the project's dev dependencies: the same CLI and floor under the other runtime. */
const BUN = root("node_modules/.bin/bun");

export interface SessionsConfig {
  runs: number;
}

function checked(run: ProcessRun, what: string): ProcessRun {
  if (run.code !== 0) throw new Error(`bench: ${what} failed (exit ${run.code}): ${run.stderr.slice(-500)}`);
  return run;
}

export async function sessionsSection(cfg: SessionsConfig): Promise<Row[]> {
  const node = process.execPath;
  const dir = mkdtempSync(join(tmpdir(), "tether-bench-sessions-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  // Its own runtime folder: its own daemon, which ends with the session below.
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, TETHER_CACHE_DIR: join(dir, "cache") };
  const call = ["call", "echo", "message=hi"];
  const onSession = ["call", "@bench", "echo", "message=hi"];
  const bun = existsSync(BUN);
  // The compiled binary, as the qualification builds it (bun build --compile of the bundle), and
  // the same with its code compiled ahead (--bytecode): Bun parses a compiled binary's whole
  // bundle (its dependencies included) at every start.
  const compile = async (out: string, flags: string[]) =>
    bun &&
    (await timeProcess(BUN, ["build", "--compile", ...flags, BIN, "--outfile", out], { env })).code === 0 &&
    existsSync(out);
  const binary = join(dir, "tether-bin");
  const bytecode = join(dir, "tether-bin-bytecode");
  const compiled = await compile(binary, []);
  const compiledBytecode = await compile(bytecode, ["--bytecode", "--format=esm"]);
  try {
    checked(
      await timeProcess(node, [BIN, "session", "start", "bench", "--", node, SERVER], { env }),
      "session start",
    );
    // One uncounted call of each kind warms the file cache.
    checked(await timeProcess(node, [BIN, ...onSession], { env }), "session call");
    checked(await timeProcess(node, [BIN, ...call, "--", node, SERVER], { env }), "one-shot call");
    const oneShot: number[] = [];
    for (let i = 0; i < cfg.runs; i++)
      oneShot.push(
        checked(await timeProcess(node, [BIN, ...call, "--", node, SERVER], { env }), "one-shot call").ms,
      );
    // The session call, interleaved with what every CLI process pays before any session work
    // (Node's boot; --help, our module graph) and the floor: a bare script making the same one
    // request on the session socket.
    const node6 = await interleave(
      {
        session: async () =>
          checked(await timeProcess(node, [BIN, ...onSession], { env }), "session call").ms,
        boot: async () => (await timeProcess(node, ["-e", "0"])).ms,
        help: async () => (await timeProcess(node, [BIN, "--help"])).ms,
        floor: async () => checked(await timeProcess(node, [FLOOR, "bench"], { env }), "session floor").ms,
      },
      { warmup: 1, runs: cfg.runs },
    );
    // The same under Bun (the CLI runs there unchanged), and the compiled binary beside `bun -e 0`.
    const bunVariants: Record<string, () => Promise<number>> = {
      call: async () => checked(await timeProcess(BUN, [BIN, ...onSession], { env }), "bun session call").ms,
      floor: async () => checked(await timeProcess(BUN, [FLOOR, "bench"], { env }), "bun session floor").ms,
      boot: async () => (await timeProcess(BUN, ["-e", "0"])).ms,
    };
    if (compiled)
      bunVariants.binary = async () =>
        checked(await timeProcess(binary, onSession, { env }), "compiled session call").ms;
    if (compiledBytecode)
      bunVariants.bytecode = async () =>
        checked(await timeProcess(bytecode, onSession, { env }), "compiled (bytecode) session call").ms;
    const bun6 = bun ? await interleave(bunVariants, { warmup: 1, runs: cfg.runs }) : undefined;
    const ours = summarize(node6.session);
    const theirs = summarize(oneShot);
    const floor = summarize(node6.floor);
    const nodeBoot = summarize(node6.boot);
    const help = summarize(node6.help);
    const overBoot = ours.median / nodeBoot.median;
    const overFloor = ours.median / floor.median;
    const rows: Row[] = [
      {
        section: "6",
        case: `tether call @NAME echo (session) vs one-shot, ${cfg.runs} runs`,
        unit: "ms",
        ours,
        official: { label: "one-shot tether call -- node server", summary: theirs },
        floor,
        // Ours over the one-shot, as every ratio in the table; the note says it the other way round.
        ratio: ours.median / theirs.median,
        target: { text: "session ≤ 40 ms", met: ours.median <= 40 },
        note: `a one-shot call takes ${(theirs.median / ours.median).toFixed(1)}× as long; tether --help ${help.median.toFixed(0)} ms`,
      },
      {
        section: "6",
        case: `tether call @NAME echo beside node -e 0, ${cfg.runs} interleaved runs`,
        unit: "ms",
        ours,
        oursWire: "1 request",
        official: { label: "node -e 0", summary: nodeBoot },
        floor,
        ratio: overBoot,
        target: {
          text: "≤ 1.6× node -e 0 and ≤ 1.15× the floor",
          met: overBoot <= 1.6 && overFloor <= 1.15,
        },
        note: `ours ÷ node -e 0 ${overBoot.toFixed(2)}×; ours ÷ floor ${overFloor.toFixed(2)}× (the floor is a bare script making the same one request on the session socket)`,
      },
    ];
    if (bun6) {
      const bunBoot = summarize(bun6.boot ?? []);
      rows.push(bunRow(cfg.runs, summarize(bun6.call ?? []), summarize(bun6.floor ?? []), bunBoot, ours));
      if (bun6.binary)
        rows.push(binaryRow(cfg.runs, summarize(bun6.binary), bunBoot, "as qualify builds it"));
      if (bun6.bytecode)
        rows.push(
          binaryRow(cfg.runs, summarize(bun6.bytecode), bunBoot, "built with --bytecode --format=esm"),
        );
    }
    return rows;
  } finally {
    await timeProcess(node, [BIN, "session", "stop", "bench"], { env }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** §6 under Bun: the session call beside the same command under Node, with Bun's floor and boot. */
function bunRow(runs: number, call: Summary, floor: Summary, boot: Summary, node: Summary): Row {
  return {
    section: "6",
    case: `tether call @NAME echo under Bun, ${runs} interleaved runs (session)`,
    unit: "ms",
    ours: call,
    official: { label: "the same command under Node", summary: node },
    floor,
    ratio: call.median / node.median,
    target: { text: "session ≤ 40 ms", met: call.median <= 40 },
    note: `ours ÷ floor ${(call.median / floor.median).toFixed(2)}× (the floor script under Bun); ours ÷ bun -e 0 ${(call.median / boot.median).toFixed(2)}×; bun -e 0 median ${boot.median.toFixed(0)} ms`,
  };
}

/** §6, a compiled binary (bun build --compile): its session call beside `bun -e 0`. */
function binaryRow(runs: number, call: Summary, boot: Summary, how: string): Row {
  return {
    section: "6",
    case: `compiled binary (${how}): call @NAME echo beside bun -e 0, ${runs} interleaved runs`,
    unit: "ms",
    ours: call,
    official: { label: "bun -e 0", summary: boot },
    ratio: call.median / boot.median,
    note: `ours ÷ bun -e 0 ${(call.median / boot.median).toFixed(2)}×`,
  };
}
