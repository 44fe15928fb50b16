/**
 * `--trace`'s OTLP/HTTP export: the official exporter, in a module (and a bundle chunk) of its
 * own, loaded by trace.ts only when an endpoint is set, so neither the CLI's entry nor a traced
 * command without one reads it. `failed` is told when a batch could not be delivered.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { SpanExporter } from "@opentelemetry/sdk-trace";

/** `ExportResultCode.SUCCESS` of @opentelemetry/core. */
const SUCCESS = 0;

export function otlpExporter(url: string, timeoutMillis: number, failed: () => void): SpanExporter {
  const inner = new OTLPTraceExporter({ url, timeoutMillis });
  return {
    export(spans, done) {
      inner.export(spans, (result) => {
        if (result.code !== SUCCESS) failed();
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush(),
  };
}
