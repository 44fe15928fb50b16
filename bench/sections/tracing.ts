// §8 What `tracing` costs a stdio call: CPU per sequential echo call on one established connection,
// tracing off against tracing on with a real OpenTelemetry SDK (a tracer provider whose batch
// processor hands spans to an exporter that drops them, and a meter provider whose reader
// aggregates the duration histogram), interleaved so drift lands on both alike. Target: on costs
// at most 5 % more CPU per call than off.

import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { type BenchClient, ours, type Target } from "../lib/clients.ts";
import { type Fleet, stdioServer } from "../lib/fleet.ts";
import { interleave } from "../lib/interleave.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

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

/** CPU µs this process spent per call over `calls` sequential echo calls (the client's side only). */
async function cpuPerCall(client: BenchClient, calls: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await client.callTool("echo", ARGS);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

export async function tracingSection(fleet: Fleet, cfg: TracingConfig): Promise<Row[]> {
  const stdio = stdioServer(fleet, "legacy-stdio");
  const target: Target = { kind: "stdio", command: stdio.command, args: [...stdio.args] };
  const tracerProvider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: dropping })],
  });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  const sample = (tracing: boolean) => async () => {
    const client = await ours(target, tracing ? { tracing: { tracerProvider, meterProvider } } : {});
    try {
      for (let w = 0; w < cfg.warmupCalls; w++) await client.callTool("echo", ARGS);
      return await cpuPerCall(client, cfg.calls);
    } finally {
      await client.close();
    }
  };
  try {
    const samples = await interleave({ off: sample(false), on: sample(true) }, cfg);
    const off = summarize(samples.off);
    const on = summarize(samples.on);
    const ratio = on.median / off.median;
    return [
      {
        section: "8",
        case: `stdio legacy 2025-11-25, ${cfg.calls} sequential echo calls: CPU per call, tracing on (SDK, dropping exporter) vs off`,
        unit: "µs",
        ours: on,
        official: { label: "tracing off", summary: off },
        ratio,
        target: { text: "≤ 1.05× tracing off", met: ratio <= 1.05 },
        note: `+${((ratio - 1) * 100).toFixed(1)} % CPU per call`,
      },
    ];
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
}
