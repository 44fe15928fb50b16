// OpenTelemetry's SDK recording in memory for the tracing tests: spans through a simple processor
// into the in-memory exporter, metrics through a reader collected on demand; the span tree as
// indented names, and the check that no canary secret is anywhere in a span.

import assert from "node:assert/strict";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { assertNoLeak } from "../helpers/canaries.ts";

export type { ReadableSpan };

/** A reader that exports nothing by itself: the test collects. */
class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export function recorder() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    options: { tracerProvider, meterProvider },
    spans: () => exporter.getFinishedSpans(),
    async metric(name: string) {
      const { resourceMetrics } = await reader.collect();
      const found = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === name);
      assert.ok(found, `the metric ${name} was recorded`);
      return found as typeof found & {
        dataPoints: { attributes: Record<string, unknown>; value: { count: number; sum: number } }[];
      };
    },
  };
}

const startOf = (s: ReadableSpan) => s.startTime[0] * 1e9 + s.startTime[1];

/** The spans as a tree of names, two spaces a level, each level in start order. */
export function treeOf(spans: readonly ReadableSpan[]): string[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const children = (parent: string | undefined) =>
    spans
      .filter((s) => {
        const p = s.parentSpanContext?.spanId;
        return parent === undefined ? p === undefined || !ids.has(p) : p === parent;
      })
      .sort((a, b) => startOf(a) - startOf(b));
  const lines: string[] = [];
  const walk = (s: ReadableSpan, depth: number) => {
    lines.push(`${"  ".repeat(depth)}${s.name}`);
    for (const c of children(s.spanContext().spanId)) walk(c, depth + 1);
  };
  for (const root of children(undefined)) walk(root, 0);
  return lines;
}

/** Everything a span says: name, attributes, status, events. */
export function spanText(s: ReadableSpan): string {
  return JSON.stringify({ name: s.name, attributes: s.attributes, status: s.status, events: s.events });
}

/** No canary secret (nor an argument that carried one) in any span, in any form. */
export function assertClean(spans: readonly ReadableSpan[]): void {
  assert.ok(spans.length > 0, "spans were recorded");
  for (const s of spans) assertNoLeak(spanText(s), `the span ${s.name}`);
}
