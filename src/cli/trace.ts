/**
 * `--trace`: the command's spans, recorded with OpenTelemetry's SDK (bundled into the CLI's
 * chunks, loaded only with the flag), under one root span for the command. After the command they
 * are drawn as a waterfall on stderr when it is a terminal (waterfall.ts), and, when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, exported over
 * OTLP/HTTP by the official exporter, which loads (trace-export.ts, its own chunk) only then.
 * Off a terminal nothing is printed: stdout and stderr stay what they are without the flag.
 */
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { Redactor } from "../errors/redact.ts";
import { terminalLine } from "../errors/terminal-text.ts";
import type { TracingOptions } from "../options/options.ts";
import type { Io } from "./io.ts";
import { VERSION } from "./version.ts";
import { type WaterfallRow, waterfall } from "./waterfall.ts";

/** How long the export may take after the command, at most: a collector that hangs cannot hold the CLI. */
const EXPORT_TIMEOUT_MS = 5_000;

/** Every span that ends, kept for the waterfall. */
class Collector implements SpanProcessor {
  readonly spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/**
 * The command's root span is the active context throughout: the CLI is one command in one
 * process, so the connection's and the requests' spans all become its children.
 */
class CommandContext implements ContextManager {
  #current: Context;
  constructor(root: Context) {
    this.#current = root;
  }
  active(): Context {
    return this.#current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.#current;
    this.#current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

/** Where the spans go over OTLP/HTTP, from the standard variables; none when neither is set. */
export function otlpUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

export class CliTrace {
  readonly #provider: TracerProvider;
  readonly #collector: Collector;
  readonly #root: Span;
  readonly #exporting: boolean;
  readonly #io: Io;
  readonly #redactor: Redactor;
  #ended = false;

  readonly #failures: { count: number };

  private constructor(
    command: string,
    io: Io,
    redactor: Redactor,
    exporter: SpanProcessor | undefined,
    failures: { count: number },
  ) {
    this.#io = io;
    this.#failures = failures;
    this.#redactor = redactor;
    this.#collector = new Collector();
    this.#exporting = exporter !== undefined;
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({
        "service.name": io.env.OTEL_SERVICE_NAME?.trim() || "tether",
        "service.version": VERSION,
      }),
      spanProcessors: exporter ? [this.#collector, exporter] : [this.#collector],
    });
    this.#root = this.#provider
      .getTracer("tether-cli", VERSION)
      .startSpan(`tether ${command}`, {}, ROOT_CONTEXT);
    context.setGlobalContextManager(new CommandContext(trace.setSpan(ROOT_CONTEXT, this.#root)));
  }

  /** Starts the command's trace; with an OTLP endpoint set, loads the exporter first. */
  static async start(command: string, io: Io, redactor: Redactor): Promise<CliTrace> {
    const url = otlpUrl(io.env);
    const failures = { count: 0 };
    const exporter = url
      ? new BatchSpanProcessor({
          exporter: (await import("./trace-export.ts")).otlpExporter(url, EXPORT_TIMEOUT_MS, () => {
            failures.count++;
          }),
          exportTimeoutMillis: EXPORT_TIMEOUT_MS,
        })
      : undefined;
    return new CliTrace(command, io, redactor, exporter, failures);
  }

  /** What connect() is given: spans go to this command's provider. */
  get options(): TracingOptions {
    return { tracerProvider: this.#provider };
  }

  /** The command failed with this public code. */
  failed(code: string): void {
    this.#root.setAttribute("error.type", code);
    this.#root.setStatus({ code: SpanStatusCode.ERROR, message: code });
  }

  /** The command is done: its span ends (closing connections afterwards are not part of it). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#root.end();
  }

  /** Draws the waterfall on a terminal's stderr, and exports the spans when an endpoint is set. */
  async report(): Promise<void> {
    this.end();
    const io = this.#io;
    if (io.stderrIsTty) {
      const columns = Math.max(40, io.stderrColumns || io.columns || 100);
      const color = !io.env.NO_COLOR && io.env.TERM !== "dumb";
      const id = this.#root.spanContext().traceId;
      io.stderr(`trace ${id}\n${waterfall(rowsOf(this.#collector.spans, this.#redactor), columns, color)}`);
    }
    if (!this.#exporting) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), EXPORT_TIMEOUT_MS + 1_000);
    });
    try {
      const outcome = await Promise.race([this.#provider.shutdown().then(() => "done" as const), bound]);
      if (!io.stderrIsTty) return;
      // A line for the person at the terminal; never the endpoint (it may hold credentials).
      if (outcome === "timeout")
        io.stderr("trace: the OTLP export did not finish in time; the spans were not all sent\n");
      else if (this.#failures.count > 0)
        io.stderr("trace: the OTLP export failed; the collector did not take the spans\n");
    } catch {
      if (io.stderrIsTty) io.stderr("trace: the OTLP export failed\n");
    } finally {
      clearTimeout(timer);
    }
  }
}

const msOf = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;

/** The spans as waterfall rows: depth-first under their parents, each level in start order. */
export function rowsOf(spans: readonly ReadableSpan[], redactor: Redactor): WaterfallRow[] {
  if (spans.length === 0) return [];
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const origin = Math.min(...spans.map((s) => msOf(s.startTime)));
  const children = (parent: string | undefined) =>
    spans
      .filter((s) => {
        const p = s.parentSpanContext?.spanId;
        return parent === undefined ? p === undefined || !ids.has(p) : p === parent;
      })
      .sort((a, b) => msOf(a.startTime) - msOf(b.startTime));
  const rows: WaterfallRow[] = [];
  const walk = (s: ReadableSpan, depth: number) => {
    const attempt = s.name === "attempt" ? ` ${s.attributes["tether.attempt"] ?? ""}` : "";
    const failed = s.status.code === SpanStatusCode.ERROR;
    rows.push({
      name: terminalLine(redactor.messageText(`${s.name}${attempt}`)),
      depth,
      startMs: msOf(s.startTime) - origin,
      durationMs: msOf(s.duration),
      outcome: failed ? terminalLine(String(s.attributes["error.type"] ?? "error")) : "ok",
    });
    for (const c of children(s.spanContext().spanId)) walk(c, depth + 1);
  };
  for (const root of children(undefined)) walk(root, 0);
  return rows;
}
