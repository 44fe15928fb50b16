// §5 What auto-detection costs on a server that only speaks 2024-11-05 HTTP+SSE: `transport:
// "auto"` (cold, and with a warm era hint) against naming the transport, in requests and time.
// The official v1 SDK's documented fallback (try Streamable HTTP, on failure open SSE) is shown
// for comparison.

import { MemoryEraHints } from "../../src/protocol/era-hints.ts";
import { type HttpTarget, officialV1, officialV1Fallback, ours } from "../lib/clients.ts";
import { formatWire } from "../lib/counting-fetch.ts";
import { type Fleet, httpServer } from "../lib/fleet.ts";
import { interleave } from "../lib/interleave.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";
import { type EstablishSample, timedEstablish, viaBuiltIn, wireOf } from "./establish.ts";

/** Extra time beyond this could only be a timer (our shortest named wait is 500 ms). */
const NO_TIMER_MS = 100;

export interface AutoDetectConfig {
  runs: number;
  warmup: number;
}

const requests = (s: EstablishSample) => s.wire.post + s.wire.get;

function medianOf(values: number[]): number {
  return summarize(values).median;
}

export async function autoDetectSection(fleet: Fleet, cfg: AutoDetectConfig): Promise<Row[]> {
  const s = httpServer(fleet, "legacy-sse-2024-11-05");
  const target: HttpTarget = { kind: "http", url: s.url, transport: "sse" };
  const hints = new MemoryEraHints();
  const r = await interleave(
    {
      named: () =>
        viaBuiltIn((fetch) => ours(target, { transport: "sse", eraHints: false, deps: { fetch } })),
      cold: () =>
        viaBuiltIn((fetch) => ours(target, { transport: "auto", eraHints: false, deps: { fetch } })),
      warm: () =>
        viaBuiltIn((fetch) => ours(target, { transport: "auto", eraHints: hints, deps: { fetch } })),
      v1Named: () => timedEstablish((fetch) => officialV1(target, { fetch })),
      v1Fallback: () => timedEstablish((fetch) => officialV1Fallback(target.url, { fetch })),
    },
    { warmup: cfg.warmup, runs: cfg.runs },
  );
  const named = summarize(r.named.map((x) => x.ms));
  const row = (
    label: string,
    samples: EstablishSample[],
    base: EstablishSample[],
    baseLabel: string,
  ): Row => {
    const ours = summarize(samples.map((x) => x.ms));
    const theirs = summarize(base.map((x) => x.ms));
    const extraRequests = medianOf(samples.map(requests)) - medianOf(base.map(requests));
    const extraMs = ours.median - theirs.median;
    const methods = samples[0]?.wire.methods.join(", ") ?? "";
    return {
      section: "5",
      case: label,
      unit: "ms",
      ours,
      oursWire: `${wireOf(samples)} (+${extraRequests}; +${extraMs.toFixed(1)} ms)`,
      official: { label: baseLabel, summary: theirs, wire: wireOf(base) },
      minimum: "+1 (one refused POST), +0 with a warm hint",
      ratio: ours.median / theirs.median,
      target: {
        text: `≤ 2 extra round trips, < ${NO_TIMER_MS} ms extra`,
        met: extraRequests <= 2 && extraMs < NO_TIMER_MS,
      },
      note: `POSTs sent: ${methods}`,
    };
  };
  const v1Extra = medianOf(r.v1Fallback.map(requests)) - medianOf(r.v1Named.map(requests));
  return [
    row("HTTP+SSE 2024-11-05, auto cold (eraHints: false)", r.cold, r.named, "tether transport: sse"),
    row("HTTP+SSE 2024-11-05, auto with warm era hint", r.warm, r.named, "tether transport: sse"),
    {
      section: "5",
      case: "HTTP+SSE 2024-11-05, official v1 documented fallback",
      unit: "ms",
      ours: summarize(r.v1Fallback.map((x) => x.ms)),
      oursWire: `${formatWire(r.v1Fallback[0]!.wire)} (+${v1Extra})`,
      official: {
        label: "v1 SSE named",
        summary: summarize(r.v1Named.map((x) => x.ms)),
        wire: wireOf(r.v1Named),
      },
      note: `for comparison only (the "ours" column is v1 here); our named-transport median is ${named.median.toFixed(1)} ms`,
    },
  ];
}
