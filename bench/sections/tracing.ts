// §8 What `tracing` costs a stdio call: CPU per sequential echo call on one established connection,
// tracing off against tracing on with a real OpenTelemetry SDK (a tracer provider whose batch
// processor hands spans to an exporter that drops them, and a meter provider whose reader
// aggregates the duration histogram), and against tracing on with nothing registered (tether's
// own instrumentation over the API's no-ops), interleaved so drift lands on all alike. Target: on
// with the SDK costs at most 5 % more CPU per call than off.

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
  const sample = (settings: ConnectSettings) => async () => {
    const client = await ours(target, settings);
    try {
      for (let w = 0; w < cfg.warmupCalls; w++) await client.callTool("echo", ARGS);
      return await cpuPerCall(client, cfg.calls);
    } finally {
      await client.close();
    }
  };
  try {
    const samples = await interleave(
      {
        off: sample({}),
        // Tracing on with nothing registered: tether's own instrumentation over the API's no-ops.
        api: sample({ tracing: true }),
        sdk: sample({ tracing: { tracerProvider, meterProvider } }),
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
    return [
      row(summarize(samples.sdk), "SDK, batch processor, dropping exporter, histogram", true),
      row(summarize(samples.api), "no provider registered: the API's no-ops", false),
    ];
  } finally {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  }
}
