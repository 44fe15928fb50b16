// §8 What `tracing` costs a stdio call: CPU per sequential echo call on one established connection,
// tracing off against tracing on with a real OpenTelemetry SDK (a tracer provider whose batch
// processor hands spans to an exporter that drops them, and a meter provider whose reader
// aggregates the duration histogram), and against tracing on with nothing registered (tether's
// own instrumentation over the API's no-ops), interleaved so drift lands on all alike. Target: on
// with the SDK costs at most 5 % more CPU per call than off.

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import type { ConnectSettings } from "../../src/index.ts";
import { type BenchClient, ours, type Target } from "../lib/clients.ts";
import { type Fleet, stdioServer } from "../lib/fleet.ts";
import { interleave } from "../lib/interleave.ts";
import type { Row } from "../lib/report.ts";
import { type Summary, summarize } from "../lib/stats.ts";

export interface TracingConfig {
  runs: number;
  warmup: number;
  calls: number;
  warmupCalls: number;
}

/** An exporter that takes every batch and keeps nothing: the SDK's own work is what is measured. */
const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

/** A reader that aggregates and is never collected. */
class IdleReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const ARGS = { message: "hello" };

/**
 * CPU ns a process has run, all its threads (Linux: each thread's schedstat, in ns), or undefined
 * where the platform has no such count.
 */
function processCpuNs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`))
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    return total;
  } catch {
    return undefined;
  }
}

/**
 * CPU µs per call over `calls` sequential echo calls: the client's own (this process), and the
 * whole call's (the client's plus the stdio server's, when the platform counts it).
 */
async function cpuPerCall(
  client: BenchClient,
  calls: number,
  serverPid: number | undefined,
): Promise<{ client: number; whole: number | undefined }> {
  const server = processCpuNs(serverPid);
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await client.callTool("echo", ARGS);
  const used = process.cpuUsage(cpu);
  const serverAfter = processCpuNs(serverPid);
  const own = (used.user + used.system) / calls;
  const served =
    server !== undefined && serverAfter !== undefined ? (serverAfter - server) / 1000 / calls : undefined;
  return { client: own, whole: served === undefined ? undefined : own + served };
}

export async function tracingSection(fleet: Fleet, cfg: TracingConfig): Promise<Row[]> {
  const stdio = stdioServer(fleet, "legacy-stdio");
  const target: Target = { kind: "stdio", command: stdio.command, args: [...stdio.args] };
  const tracerProvider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: dropping })],
  });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  // The whole call's CPU, beside the client's: what the client and the server spent together.
  const whole: Record<string, number[]> = { off: [], api: [], sdk: [] };
  const sample = (name: string, settings: ConnectSettings) => async () => {
    let serverPid: number | undefined;
    const recording = ((command: string, args: readonly string[], options: object) => {
      const child = spawn(command, args, options);
      serverPid = child.pid;
      return child;
    }) as unknown as typeof spawn;
    const client = await ours(target, { ...settings, deps: { spawn: recording } });
    try {
      for (let w = 0; w < cfg.warmupCalls; w++) await client.callTool("echo", ARGS);
      const used = await cpuPerCall(client, cfg.calls, serverPid);
      if (used.whole !== undefined) whole[name]?.push(used.whole);
      return used.client;
    } finally {
      await client.close();
    }
  };
  try {
    const samples = await interleave(
      {
        off: sample("off", {}),
        // Tracing on with nothing registered: tether's own instrumentation over the API's no-ops.
        api: sample("api", { tracing: true }),
        sdk: sample("sdk", { tracing: { tracerProvider, meterProvider } }),
      },
      cfg,
    );
    const off = summarize(samples.off);
    const row = (summary: Summary, what: string, judged: boolean): Row => {
      const ratio = summary.median / off.median;
      return {
        section: "8",
        case: `stdio legacy 2025-11-25, ${cfg.calls} sequential echo calls: CPU per call, tracing on (${what}) vs off`,
        unit: "µs",
        ours: summary,
        official: { label: "tracing off", summary: off },
        ratio,
        target: judged ? { text: "≤ 1.05× tracing off", met: ratio <= 1.05 } : undefined,
        note: `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} % CPU per call`,
      };
    };
    const rows = [
      row(summarize(samples.sdk), "SDK, batch processor, dropping exporter, histogram", true),
      row(summarize(samples.api), "no provider registered: the API's no-ops", false),
    ];
    if (whole.off!.length > 0 && whole.sdk!.length > 0) {
      const wholeOff = summarize(whole.off!);
      const wholeSdk = summarize(whole.sdk!);
      const ratio = wholeSdk.median / wholeOff.median;
      rows.push({
        section: "8",
        case: `stdio legacy 2025-11-25, ${cfg.calls} sequential echo calls: CPU per whole call (client and server process), tracing on (SDK) vs off`,
        unit: "µs",
        ours: wholeSdk,
        official: { label: "tracing off", summary: wholeOff },
        ratio,
        note: `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} % CPU per whole call; the client's own CPU is the row judged against the target`,
      });
    }
    return rows;
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
}
