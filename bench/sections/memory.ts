// §4 Memory under a 200 MB reply. Each measurement runs in a process of its own (memory-probe.ts)
// that samples RSS around one call; the server is a bare streaming server (big-reply-server.mjs)
// that never holds the reply and reports how many bytes reached the socket.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { timeProcess } from "../lib/processes.ts";
import { startReadyChild } from "../lib/ready-child.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

const PROBE = fileURLToPath(new URL("../memory-probe.ts", import.meta.url));
const SERVER = fileURLToPath(new URL("../scripts/big-reply-server.mjs", import.meta.url));
const MiB = 1024 * 1024;
const CLI = process.env.TETHER_BENCH_CLI ?? fileURLToPath(new URL("../../dist/tether.mjs", import.meta.url));

/** A process's resident and peak resident memory, in bytes (Linux). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) =>
    Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

/** Runs the CLI to its end with its output dropped (a 200 MB result is not the bench's to hold). */
function cli(args: string[], env: NodeJS.ProcessEnv, stdout: "pipe" | "ignore" = "ignore"): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", stdout, "pipe"] });
    let out = "";
    let err = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`bench: tether ${args[0]} failed (${code}): ${err.slice(-500)}`)),
    );
  });
}

/**
 * One reply through a session: a fresh session process on the server, one small call to warm its
 * paths, then the big call from a command whose output is dropped; the session process's peak
 * resident memory over its resting memory before the call is the growth.
 */
async function sessionProbe(
  url: string,
  bytes: number,
  ceiling: number,
): Promise<{ growth: number; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), "tether-bench-session-memory-"));
  const runtime = join(dir, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, TETHER_CACHE_DIR: join(dir, "cache") };
  try {
    const info = JSON.parse(
      // One configured secret, so the reply is searched for it on its way out, as in real use.
      await cli(
        [
          "session",
          "start",
          "big",
          url,
          "--call-max-bytes",
          String(ceiling),
          "-H",
          "X-Bench-Secret: bench-secret-7f3a9c2e41d0",
          "--json",
        ],
        env,
        "pipe",
      ),
    ) as { daemonPid: number };
    try {
      await cli(["call", "@big", "big", "bytes:=1024"], env);
      const before = memoryOf(info.daemonPid);
      const started = performance.now();
      await cli(["call", "@big", "big", `bytes:=${bytes}`], env);
      const ms = performance.now() - started;
      return { growth: memoryOf(info.daemonPid).peak - before.rss, ms };
    } finally {
      await cli(["session", "stop", "big"], env);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface MemoryConfig {
  repeats: number;
  replyBytes: number;
  smallCeilingBytes: number;
  largeCeilingBytes: number;
}

interface ProbeResult {
  which: string;
  ms: number;
  growth: number;
  ok: boolean;
  textBytes?: number;
  code?: string;
  reason?: string;
}

interface ServerStats {
  total: number;
  written: number;
  complete: boolean;
}

export interface MemorySample {
  probe: ProbeResult;
  server: ServerStats;
}

async function probe(url: string, which: string, bytes: number, ceiling: number): Promise<MemorySample> {
  const run = await timeProcess(
    process.execPath,
    ["--expose-gc", "--import", "tsx", PROBE, which, url, String(bytes), String(ceiling)],
    { timeoutMs: 120_000 },
  );
  if (run.code !== 0) throw new Error(`bench: memory probe ${which} failed: ${run.stderr.slice(-800)}`);
  const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as ProbeResult;
  // The server's write callbacks settle a moment after the client hangs up.
  await new Promise((r) => setTimeout(r, 100));
  const server = (await (await fetch(new URL("/stats", url))).json()) as ServerStats;
  return { probe: result, server };
}

const mib = (values: number[]): Summary => summarize(values.map((v) => v / MiB));

export async function memorySection(
  cfg: MemoryConfig,
): Promise<{ rows: Row[]; samples: Record<string, MemorySample[]> }> {
  const server = await startReadyChild(SERVER);
  const samples: Record<string, MemorySample[]> = { oursSmall: [], oursLarge: [], v2: [], v1: [] };
  const session: { growth: number; ms: number }[] = [];
  try {
    for (let round = 0; round < cfg.repeats; round++) {
      // Each kind once per round, so a slow phase of the machine hits them all.
      samples.oursSmall!.push(await probe(server.url, "ours", cfg.replyBytes, cfg.smallCeilingBytes));
      samples.oursLarge!.push(await probe(server.url, "ours", cfg.replyBytes, cfg.largeCeilingBytes));
      samples.v2!.push(await probe(server.url, "v2", cfg.replyBytes, 0));
      samples.v1!.push(await probe(server.url, "v1", cfg.replyBytes, 0));
      if (process.platform === "linux")
        session.push(await sessionProbe(server.url, cfg.replyBytes, cfg.largeCeilingBytes));
    }
  } finally {
    await server.stop();
  }
  const growth = (k: string) => mib(samples[k]!.map((s) => s.probe.growth));
  const times = (k: string) => summarize(samples[k]!.map((s) => s.probe.ms));
  const written = summarize(samples.oursSmall!.map((s) => s.server.written / 1e6));
  const replyMiB = cfg.replyBytes / MiB;
  const xReply = (k: string) => growth(k).median / replyMiB;
  const outcome = (k: string) => {
    const s = samples[k]!;
    const failed = s.filter((x) => !x.probe.ok);
    if (failed.length === 0) return `read all ${(cfg.replyBytes / 1e6).toFixed(0)} MB`;
    return `${failed.length}/${s.length} failed: ${failed[0]!.probe.code}/${failed[0]!.probe.reason ?? "?"}`;
  };
  const small = growth("oursSmall");
  const rows: Row[] = [
    {
      section: "4",
      case: `${(cfg.replyBytes / 1e6).toFixed(0)} MB reply, ${cfg.smallCeilingBytes / MiB} MiB ceiling: RSS growth`,
      unit: "MiB",
      ours: small,
      oursWire: `server wrote ${written.median.toFixed(1)} MB [${written.min.toFixed(1)}–${written.max.toFixed(1)}]`,
      official: { label: "v2 (no byte ceiling on HTTP)", summary: growth("v2"), wire: outcome("v2") },
      target: {
        text: "≤ 16 MiB growth, stops early",
        met: small.max <= 16 && written.max < cfg.replyBytes / 1e6 / 2,
      },
    },
    {
      section: "4",
      case: `${(cfg.replyBytes / 1e6).toFixed(0)} MB reply, ${cfg.largeCeilingBytes / MiB} MiB ceiling: RSS growth`,
      unit: "MiB",
      ours: growth("oursLarge"),
      oursWire: `${xReply("oursLarge").toFixed(2)}× reply; ${times("oursLarge").median.toFixed(0)} ms`,
      official: {
        label: "v2",
        summary: growth("v2"),
        wire: `${xReply("v2").toFixed(2)}× reply; ${times("v2").median.toFixed(0)} ms`,
      },
      ratio: xReply("oursLarge"),
      target: { text: "≤ 1.5× reply", met: xReply("oursLarge") <= 1.5 },
      note: `ratio column is peak RSS growth ÷ reply size (${replyMiB.toFixed(1)} MiB); ours: ${outcome("oursLarge")}`,
    },
    {
      section: "4",
      case: `${(cfg.replyBytes / 1e6).toFixed(0)} MB reply, ${cfg.largeCeilingBytes / MiB} MiB ceiling: RSS growth`,
      unit: "MiB",
      ours: growth("oursLarge"),
      oursWire: `${xReply("oursLarge").toFixed(2)}× reply`,
      official: {
        label: "v1",
        summary: growth("v1"),
        wire: `${xReply("v1").toFixed(2)}× reply; ${times("v1").median.toFixed(0)} ms`,
      },
      ratio: xReply("oursLarge"),
      target: { text: "≤ 1.5× reply", met: xReply("oursLarge") <= 1.5 },
    },
  ];
  if (session.length > 0) {
    const through = mib(session.map((x) => x.growth));
    const ratio = through.median / replyMiB;
    rows.push({
      section: "4",
      case: `${(cfg.replyBytes / 1e6).toFixed(0)} MB reply through a session (@NAME), ${cfg.largeCeilingBytes / MiB} MiB ceiling: session process RSS growth`,
      unit: "MiB",
      ours: through,
      oursWire: `${ratio.toFixed(2)}× reply; ${summarize(session.map((x) => x.ms)).median.toFixed(0)} ms for the whole command`,
      official: { label: "one-shot client (ours, above)", summary: growth("oursLarge") },
      ratio,
      target: { text: "≤ 1.5× reply", met: ratio <= 1.5 },
      note: "the session process (one secret configured) reads, redacts and writes the reply to the command; its peak RSS over its resting RSS",
    });
  }
  return { rows, samples };
}
