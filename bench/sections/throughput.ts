// §3 Call throughput on one established connection: sequential calls, and 32 callers at once,
// ours against the official clients, over Streamable HTTP (2025-11-25, JSON replies) and stdio.

import { NodeHttp } from "../../src/transport/node-http.ts";
import { type BenchClient, officialV1, officialV2, ours, type Target } from "../lib/clients.ts";
import { type Fleet, httpServer, stdioServer } from "../lib/fleet.ts";
import { floorLegacyStreamable } from "../lib/floor-http.ts";
import { floorStdio } from "../lib/floor-stdio.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

export interface ThroughputConfig {
  repeats: number;
  sequentialCalls: number;
  concurrency: number;
  callsPerWorker: number;
  warmupCalls: number;
}

interface Rates {
  sequential: number[];
  concurrent: number[];
  /** CPU µs this process spent per call (the client's side only; servers run elsewhere). */
  sequentialCpu: number[];
  concurrentCpu: number[];
}

/** Runs `body` and returns calls per second and this process's CPU µs per call. */
async function measure(calls: number, body: () => Promise<void>): Promise<{ rate: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await body();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: calls / seconds, cpuUs: (used.user + used.system) / calls };
}

const ARGS = { message: "hello" };

function sequential(client: BenchClient, calls: number) {
  return measure(calls, async () => {
    for (let i = 0; i < calls; i++) await client.callTool("echo", ARGS);
  });
}

function concurrent(client: BenchClient, workers: number, each: number) {
  return measure(workers * each, async () => {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = 0; i < each; i++) await client.callTool("echo", ARGS);
      }),
    );
  });
}

export async function throughputSection(fleet: Fleet, cfg: ThroughputConfig): Promise<Row[]> {
  const json = httpServer(fleet, "streamable-2025-11-25-json");
  const stdio = stdioServer(fleet, "legacy-stdio");
  const cases: { label: string; target: Target; floor: () => Promise<BenchClient> }[] = [
    {
      label: "Streamable HTTP 2025-11-25 JSON",
      target: { kind: "http", url: json.url, transport: "streamable-http" },
      // Over the HTTP client ours uses by default (node-http.ts), its pool released with the client.
      floor: async () => {
        const pool = new NodeHttp();
        const floor = await floorLegacyStreamable(json.url, pool.fetch);
        return { ...floor, close: () => floor.close().finally(() => pool.close()) };
      },
    },
    {
      label: "stdio legacy 2025-11-25",
      target: { kind: "stdio", command: stdio.command, args: [...stdio.args] },
      floor: () => floorStdio(stdio.command, stdio.args),
    },
  ];
  const rows: Row[] = [];
  for (const c of cases) {
    const clients: Record<string, () => Promise<BenchClient>> = {
      ours: () => ours(c.target),
      v2: () => officialV2(c.target, { negotiation: "legacy" }),
      v1: () => officialV1(c.target),
      floor: c.floor,
    };
    const rates: Record<string, Rates> = {};
    for (const name of Object.keys(clients))
      rates[name] = { sequential: [], concurrent: [], sequentialCpu: [], concurrentCpu: [] };
    const names = Object.keys(clients);
    for (let round = 0; round < cfg.repeats; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length]!;
        const client = await clients[name]!();
        try {
          for (let w = 0; w < cfg.warmupCalls; w++) await client.callTool("echo", ARGS);
          const seq = await sequential(client, cfg.sequentialCalls);
          const conc = await concurrent(client, cfg.concurrency, cfg.callsPerWorker);
          rates[name]!.sequential.push(seq.rate);
          rates[name]!.sequentialCpu.push(seq.cpuUs);
          rates[name]!.concurrent.push(conc.rate);
          rates[name]!.concurrentCpu.push(conc.cpuUs);
        } finally {
          await client.close();
        }
      }
    }
    const s = (name: string, kind: keyof Rates): Summary => summarize(rates[name]![kind]);
    const cpu = (name: string, kind: "sequential" | "concurrent") =>
      `${s(name, kind === "sequential" ? "sequentialCpu" : "concurrentCpu").median.toFixed(0)} µs CPU/call`;
    for (const [kind, label] of [
      ["sequential", `${cfg.sequentialCalls} sequential echo calls`],
      ["concurrent", `${cfg.concurrency} callers × ${cfg.callsPerWorker} echo calls`],
    ] as const) {
      const cpuKind = kind === "sequential" ? "sequentialCpu" : "concurrentCpu";
      // "The better official client": the faster one for throughput, the thriftier one for CPU.
      const faster = s("v1", kind).median >= s("v2", kind).median ? "v1" : "v2";
      const thriftier = s("v1", cpuKind).median <= s("v2", cpuKind).median ? "v1" : "v2";
      const rate = s("ours", kind).median / s(faster, kind).median;
      const vsFloor = s("ours", kind).median / s("floor", kind).median;
      for (const official of [faster, faster === "v1" ? "v2" : "v1"]) {
        const best = official === faster;
        rows.push({
          section: "3",
          case: `${c.label}, ${label}`,
          unit: "calls/s",
          ours: s("ours", kind),
          oursWire: cpu("ours", kind),
          official: { label: official, summary: s(official, kind), wire: cpu(official, kind) },
          floor: s("floor", kind),
          ratio: s("ours", kind).median / s(official, kind).median,
          target: best
            ? { text: "≥ 1.1× the faster official, ≥ 0.9× floor", met: rate >= 1.1 && vsFloor >= 0.9 }
            : undefined,
          note: best ? `ours ÷ floor ${vsFloor.toFixed(2)}×` : undefined,
        });
      }
      const cpuRatio = s("ours", cpuKind).median / s(thriftier, cpuKind).median;
      rows.push({
        section: "3",
        case: `${c.label}, ${label}: CPU per call`,
        unit: "µs",
        ours: s("ours", cpuKind),
        official: { label: thriftier, summary: s(thriftier, cpuKind) },
        floor: s("floor", cpuKind),
        ratio: cpuRatio,
        target: { text: "≤ 0.85× the thriftier official", met: cpuRatio <= 0.85 },
      });
    }
  }
  return rows;
}
