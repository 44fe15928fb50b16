// §6 Sessions: 20 sequential `tether call @NAME echo` through a live session against 20 one-shot
// `tether call echo -- node <stdio server>`, each a whole process timed from spawn to exit. The
// session call pays Node's boot and our module graph but no spawn and no handshake; the one-shot
// call pays all of it. Node's own boot (`node -e 0`) and `tether --help` (boot plus the CLI's module
// graph) are measured beside them: what a session call costs beyond them is the session's own.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
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
  try {
    checked(
      await timeProcess(node, [BIN, "session", "start", "bench", "--", node, SERVER], { env }),
      "session start",
    );
    // One uncounted call of each kind warms the file cache.
    checked(await timeProcess(node, [BIN, "call", "@bench", "echo", "message=hi"], { env }), "session call");
    checked(await timeProcess(node, [BIN, ...call, "--", node, SERVER], { env }), "one-shot call");
    const session: number[] = [];
    for (let i = 0; i < cfg.runs; i++)
      session.push(
        checked(
          await timeProcess(node, [BIN, "call", "@bench", "echo", "message=hi"], { env }),
          "session call",
        ).ms,
      );
    const oneShot: number[] = [];
    for (let i = 0; i < cfg.runs; i++)
      oneShot.push(
        checked(await timeProcess(node, [BIN, ...call, "--", node, SERVER], { env }), "one-shot call").ms,
      );
    // What every CLI process pays before any session work: Node's boot, then our module graph; and
    // the floor, a bare script making the same three requests on the session socket.
    const boot: number[] = [];
    const cliBoot: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < cfg.runs; i++) {
      boot.push((await timeProcess(node, ["-e", "0"])).ms);
      cliBoot.push((await timeProcess(node, [BIN, "--help"])).ms);
      bare.push(checked(await timeProcess(node, [FLOOR, "bench"], { env }), "session floor").ms);
    }
    // The same session call, floor and boot under Bun (the CLI runs there unchanged), alternated.
    const bunCall: number[] = [];
    const bunFloor: number[] = [];
    const bunBoot: number[] = [];
    const bun = existsSync(BUN);
    for (let i = 0; bun && i < cfg.runs; i++) {
      bunBoot.push((await timeProcess(BUN, ["-e", "0"])).ms);
      bunCall.push(
        checked(
          await timeProcess(BUN, [BIN, "call", "@bench", "echo", "message=hi"], { env }),
          "bun session call",
        ).ms,
      );
      bunFloor.push(checked(await timeProcess(BUN, [FLOOR, "bench"], { env }), "bun session floor").ms);
    }
    const ours = summarize(session);
    const theirs = summarize(oneShot);
    const floor = summarize(bare);
    const nodeBoot = summarize(boot);
    const version = summarize(cliBoot);
    // Ours over the one-shot, as every ratio in the table; the note says it the other way round.
    const ratio = ours.median / theirs.median;
    return [
      {
        section: "6",
        case: `tether call @NAME echo, ${cfg.runs} sequential (session) vs one-shot`,
        unit: "ms",
        ours,
        official: { label: "one-shot tether call -- node server", summary: theirs },
        floor,
        ratio,
        target: { text: "session ≤ 40 ms", met: ours.median <= 40 },
        note: `a one-shot call takes ${(theirs.median / ours.median).toFixed(1)}× as long; ours ÷ floor ${(ours.median / floor.median).toFixed(2)}× (the floor is a bare script on the session socket); node -e 0 median ${nodeBoot.median.toFixed(0)} ms, tether --help ${version.median.toFixed(0)} ms`,
      },
      ...(bun ? [bunRow(cfg.runs, summarize(bunCall), summarize(bunFloor), summarize(bunBoot), ours)] : []),
    ];
  } finally {
    await timeProcess(node, [BIN, "session", "stop", "bench"], { env }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** §6 under Bun: the session call beside the same command under Node, with Bun's floor and boot. */
function bunRow(runs: number, call: Summary, floor: Summary, boot: Summary, node: Summary): Row {
  return {
    section: "6",
    case: `tether call @NAME echo under Bun, ${runs} sequential (session)`,
    unit: "ms",
    ours: call,
    official: { label: "the same command under Node", summary: node },
    floor,
    ratio: call.median / node.median,
    target: { text: "session ≤ 40 ms", met: call.median <= 40 },
    note: `ours ÷ floor ${(call.median / floor.median).toFixed(2)}× (the floor script under Bun); bun -e 0 median ${boot.median.toFixed(0)} ms`,
  };
}
