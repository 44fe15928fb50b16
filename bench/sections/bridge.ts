// §7 The bridge. (a) What `tether bridge` adds per call: sequential `echo` calls from our client
// to the example stdio server directly, and to the same server through `tether bridge` (the
// bridge is then the stdio server our client spawns). Time per call on medians, and CPU per call
// over the call loop only (this process and every process below it, from /proc). (b) A 200 MB reply through a bridge whose call ceiling is 1 MiB: the
// bridge's RSS high-water mark (VmHWM) over its RSS once established.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { connect } from "../../src/index.ts";
import { startReadyChild } from "../lib/ready-child.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const BIN = process.env.TETHER_BENCH_CLI ?? root("dist/tether.mjs");
const RELAY = root("bench/scripts/floor-relay.mjs");
const SERVER = root("examples/servers/legacy-stdio.mjs");
const BIG_SERVER = root("bench/scripts/big-reply-server.mjs");
const MiB = 1024 * 1024;
const BENCH_SECRET = "bench-secret-7f3a9c2e41d0";
const TICKS_PER_MS = 100 / 1000;

export interface BridgeConfig {
  repeats: number;
  calls: number;
  replyBytes: number;
  ceilingBytes: number;
}

/** `utime + stime` (ms) and the parent of every process, from /proc. */
function processes(): Map<number, { ppid: number; cpu: number }> {
  const out = new Map<number, { ppid: number; cpu: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(entry), {
        ppid: Number(fields[1]),
        cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_MS,
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** CPU time (ms) of this process and every process below it, live ones only. */
function treeCpuMs(): number {
  const all = processes();
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of all)
      if (!mine.has(pid) && mine.has(p.ppid)) {
        mine.add(pid);
        grew = true;
      }
  }
  let total = 0;
  for (const pid of mine) total += all.get(pid)?.cpu ?? 0;
  return total;
}

/** Straight to the server, through `tether bridge`, or through a relay that only moves bytes. */
type Via = "direct" | "bridge" | "relay";

/** One run: connect, `calls` sequential echo calls, close. Per-call times and the CPU the calls took. */
async function run(via: Via, calls: number): Promise<{ perCall: number[]; cpu: number }> {
  const node = process.execPath;
  const target =
    via === "bridge"
      ? // One configured secret, as a real bridge holds: every message to the host is searched for it.
        { command: node, args: [BIN, "bridge", "-e", `BENCH_SECRET=${BENCH_SECRET}`, "--", node, SERVER] }
      : via === "relay"
        ? { command: node, args: [RELAY, "--", node, SERVER] }
        : { command: node, args: [SERVER] };
  const client = await connect({ ...target, eraHints: false, probeTimeoutMs: 30_000 });
  const perCall: number[] = [];
  let cpu = 0;
  try {
    // A few uncounted calls first: the first calls pay for lazy compilation on every side.
    for (let i = 0; i < 20; i++) await client.callTool("echo", { message: "hi" });
    const cpu0 = treeCpuMs();
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await client.callTool("echo", { message: "hi" });
      perCall.push(performance.now() - t);
    }
    cpu = treeCpuMs() - cpu0;
  } finally {
    await client.close();
  }
  return { perCall, cpu };
}

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** A raw host on a bridge's stdio: one request, its reply. */
function ask(
  child: ChildProcessWithoutNullStreams,
  message: object,
  id: number,
): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let buffer = "";
    const onData = (d: string) => {
      buffer += d;
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const m = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        if (m.id === id) {
          child.stdout.off("data", onData);
          resolve(m);
        }
      }
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, ...message })}\n`);
  });
}

async function bigReply(cfg: BridgeConfig): Promise<{ growth: number; refused: string }> {
  const server = await startReadyChild(BIG_SERVER);
  const child = spawn(
    process.execPath,
    [BIN, "bridge", "--call-max-bytes", String(cfg.ceilingBytes), server.url],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  try {
    await ask(
      child,
      {
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "bench", version: "0" },
        },
      },
      1,
    );
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    const before = memoryOf(child.pid!);
    const reply = await ask(
      child,
      { method: "tools/call", params: { name: "big", arguments: { bytes: cfg.replyBytes } } },
      2,
    );
    const after = memoryOf(child.pid!);
    const data = (reply.error as { data?: { code?: string; reason?: string } } | undefined)?.data;
    return { growth: after.hwm - before.rss, refused: `${data?.code ?? "none"}/${data?.reason ?? "none"}` };
  } finally {
    child.stdin.end();
    await once(child, "exit");
    await server.stop();
  }
}

export async function bridgeSection(cfg: BridgeConfig): Promise<Row[]> {
  const direct: number[] = [];
  const bridged: number[] = [];
  const cpuDirect: number[] = [];
  const cpuBridged: number[] = [];
  const cpuRelay: number[] = [];
  for (let r = 0; r < cfg.repeats; r++) {
    // Alternated, so load changes on the machine fall on all alike.
    for (const via of ["direct", "bridge", "relay"] as const) {
      const { perCall, cpu } = await run(via, cfg.calls);
      if (via === "direct") direct.push(...perCall);
      if (via === "bridge") bridged.push(...perCall);
      (via === "direct" ? cpuDirect : via === "bridge" ? cpuBridged : cpuRelay).push(cpu / cfg.calls);
    }
  }
  const ours = summarize(bridged);
  const theirs = summarize(direct);
  const added = ours.median - theirs.median;
  const cpuOurs = summarize(cpuBridged);
  const cpuTheirs = summarize(cpuDirect);
  const cpuShare = cpuTheirs.median > 0 ? (cpuOurs.median - cpuTheirs.median) / cpuTheirs.median : 0;
  const cpuFloor = summarize(cpuRelay);
  const floorShare = cpuTheirs.median > 0 ? (cpuFloor.median - cpuTheirs.median) / cpuTheirs.median : 0;
  const growths: number[] = [];
  let refused = "";
  for (let r = 0; r < Math.max(1, Math.min(cfg.repeats, 3)); r++) {
    const b = await bigReply(cfg);
    growths.push(b.growth / MiB);
    refused = b.refused;
  }
  const growth: Summary = summarize(growths);
  return [
    {
      section: "7",
      case: `echo through tether bridge (stdio) vs direct, ${cfg.calls} sequential calls`,
      unit: "ms",
      ours,
      official: { label: "direct (no bridge)", summary: theirs },
      ratio: ours.median / theirs.median,
      target: { text: "≤ +1 ms median", met: added <= 1 },
      note: `adds ${added.toFixed(3)} ms median per call`,
    },
    {
      section: "7",
      case: "CPU per call through the bridge vs direct (all processes)",
      unit: "ms",
      ours: cpuOurs,
      official: { label: "direct (no bridge)", summary: cpuTheirs },
      floor: cpuFloor,
      ratio: cpuTheirs.median > 0 ? cpuOurs.median / cpuTheirs.median : undefined,
      target: { text: "≤ +10 % CPU", met: cpuShare <= 0.1 },
      note: `${(cpuShare * 100).toFixed(1)} % more CPU per call; the floor, a relay that only moves bytes, is ${(floorShare * 100).toFixed(1)} % more`,
    },
    {
      section: "7",
      case: `${Math.round(cfg.replyBytes / 1e6)} MB reply through the bridge under a ${cfg.ceilingBytes / MiB} MiB ceiling: bridge RSS growth`,
      unit: "MiB",
      ours: growth,
      target: { text: "≤ 16 MiB", met: growth.max <= 16 },
      note: `the host got ${refused}`,
    },
  ];
}
