// §1 Establishment + tool listing, per era and transport: time from nothing to a tool list, and
// what went on the wire to get there, ours against the official client doing the same work.

import type { DiscoverResult } from "@modelcontextprotocol/client";
import { MemoryEraHints } from "../../src/protocol/era-hints.ts";
import { NodeHttp } from "../../src/transport/node-http.ts";
import {
  type BenchClient,
  type HttpTarget,
  officialV1,
  officialV2,
  ours,
  type Target,
} from "../lib/clients.ts";
import { countingFetch, formatWire, newWireCount, type WireCount } from "../lib/counting-fetch.ts";
import { type Fleet, httpServer, stdioServer } from "../lib/fleet.ts";
import { floorLegacyStreamable, floorModern } from "../lib/floor-http.ts";
import { floorStdio } from "../lib/floor-stdio.ts";
import { interleave } from "../lib/interleave.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";
import { formatTally, StdioTallier } from "../lib/stdio-tally.ts";

export interface EstablishSample {
  ms: number;
  /** CPU time of this (the client's) process over the timed span, user + system. */
  cpuMs: number;
  wire: WireCount;
}

/** Connects, lists the tools, and stops the clock; closing is not timed. */
export async function timedEstablish(
  make: (fetch: typeof globalThis.fetch) => Promise<BenchClient>,
  inner: typeof globalThis.fetch = fetch,
): Promise<EstablishSample> {
  const wire = newWireCount();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const client = await make(countingFetch(wire, inner));
  await client.listTools();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const snapshot = { ...wire, methods: [...wire.methods] };
  await client.close();
  return { ms, cpuMs: (used.user + used.system) / 1000, wire: snapshot };
}

/**
 * timedEstablish over the HTTP client ours uses by default on Node (node-http.ts), each request
 * counted on its way in: ours, and the no-library floor beside it, run on the same HTTP client,
 * while the official clients run on theirs (the platform's fetch). The pool is released after the
 * client closes, as a transport releases its own.
 */
export async function viaBuiltIn(
  make: (fetch: typeof globalThis.fetch) => Promise<BenchClient>,
): Promise<EstablishSample> {
  const pool = new NodeHttp();
  try {
    return await timedEstablish(make, pool.fetch);
  } finally {
    pool.close();
  }
}

/** The wire count the samples agree on (they should all agree; a spread is shown as such). */
export function wireOf(samples: readonly EstablishSample[]): string {
  const seen = new Map<string, number>();
  for (const s of samples) {
    const key = formatWire(s.wire);
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const keys = [...seen.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  return keys.length === 1 ? keys[0]! : `${keys.join(" / ")} (varied)`;
}

const TIME_TARGET = 0.8;
/** Where a floor is measured, ours must also be within this of it. */
const FLOOR_TARGET = 1.1;

/** A row's target beyond the default (≤ 0.8× official). */
interface RowTarget {
  /** Ours ÷ official at most this. */
  ratio?: number;
  /** Ours ÷ the floor at most FLOOR_TARGET too (the floor is shown either way). */
  nearFloor?: boolean;
  /** Every sample of ours sent at most this many POSTs. */
  maxPosts?: number;
}

function timeRow(
  c: string,
  oursSamples: EstablishSample[],
  label: string,
  theirs: EstablishSample[],
  minimum: string,
  wires?: { ours: string; official: string },
  note?: string,
  floor?: EstablishSample[],
  want: RowTarget = {},
): Row {
  const o = summarize(oursSamples.map((s) => s.ms));
  const t = summarize(theirs.map((s) => s.ms));
  const ratio = o.median / t.median;
  const f = floor ? summarize(floor.map((s) => s.ms)) : undefined;
  const limit = want.ratio ?? TIME_TARGET;
  const texts = [`≤ ${limit}×`];
  let met = ratio <= limit;
  if (f && want.nearFloor) {
    texts.push(`≤ ${FLOOR_TARGET}× floor`);
    met &&= o.median / f.median <= FLOOR_TARGET;
  }
  if (want.maxPosts !== undefined) {
    texts.unshift(`${want.maxPosts} POST`);
    met &&= oursSamples.every((s) => s.wire.post <= want.maxPosts!);
  }
  const cpu = (samples: EstablishSample[]) =>
    `; ${summarize(samples.map((s) => s.cpuMs)).median.toFixed(1)} ms CPU`;
  return {
    section: "1",
    case: c,
    unit: "ms",
    ours: o,
    oursWire: (wires?.ours ?? wireOf(oursSamples)) + cpu(oursSamples),
    official: { label, summary: t, wire: (wires?.official ?? wireOf(theirs)) + cpu(theirs) },
    minimum,
    floor: f,
    ratio,
    target: { text: texts.join(", "), met },
    note: f ? [note, `ours ÷ floor ${(o.median / f.median).toFixed(2)}×`].filter(Boolean).join("; ") : note,
  };
}

export interface EstablishConfig {
  httpRuns: number;
  stdioRuns: number;
  warmup: number;
}

export async function establishSection(fleet: Fleet, cfg: EstablishConfig): Promise<Row[]> {
  const rows: Row[] = [];
  const http = (name: string): HttpTarget => {
    const s = httpServer(fleet, name);
    return { kind: "http", url: s.url, transport: s.transport };
  };

  // Legacy Streamable HTTP, three server builds.
  for (const [name, label] of [
    ["streamable-2025-06-18", "Streamable HTTP 2025-06-18 (SSE replies)"],
    ["streamable-2025-11-25-sse", "Streamable HTTP 2025-11-25 (SSE replies)"],
    ["streamable-2025-11-25-json", "Streamable HTTP 2025-11-25 (JSON replies)"],
  ] as const) {
    const target = http(name);
    const hints = new MemoryEraHints();
    const r = await interleave(
      {
        oursCold: () => viaBuiltIn((fetch) => ours(target, { eraHints: false, deps: { fetch } })),
        oursWarm: () => viaBuiltIn((fetch) => ours(target, { eraHints: hints, deps: { fetch } })),
        v2Auto: () => timedEstablish((fetch) => officialV2(target, { fetch })),
        v2Prior: () => timedEstablish((fetch) => officialV2(target, { fetch, prior: { kind: "legacy" } })),
        v1: () => timedEstablish((fetch) => officialV1(target, { fetch })),
        floor: () => viaBuiltIn((fetch) => floorLegacyStreamable(target.url, fetch)),
      },
      { warmup: cfg.warmup, runs: cfg.httpRuns },
    );
    const floor = r.floor;
    rows.push(
      timeRow(`${label}, cold (eraHints: false)`, r.oursCold, "v2 auto", r.v2Auto, "4 POST (probe + 3)"),
      timeRow(
        `${label}, warm era hint`,
        r.oursWarm,
        "v2 prior: legacy",
        r.v2Prior,
        "3 POST",
        undefined,
        undefined,
        floor,
        { nearFloor: true },
      ),
      timeRow(`${label}, warm era hint`, r.oursWarm, "v1", r.v1, "3 POST", undefined, undefined, floor, {
        nearFloor: true,
      }),
    );
  }

  // Modern 2026-07-28: discover is the establishment when cold; warm, ours adopts the discover
  // result kept with its era hint and v2 is handed the one it stored (`prior: modern`).
  {
    const target = http("modern-2026-07-28");
    const hints = new MemoryEraHints();
    const discover = await storedDiscover(target);
    const r = await interleave(
      {
        oursCold: () => viaBuiltIn((fetch) => ours(target, { eraHints: false, deps: { fetch } })),
        oursWarm: () => viaBuiltIn((fetch) => ours(target, { eraHints: hints, deps: { fetch } })),
        v2Auto: () => timedEstablish((fetch) => officialV2(target, { fetch })),
        v2Prior: () =>
          timedEstablish((fetch) => officialV2(target, { fetch, prior: { kind: "modern", discover } })),
        floor: () => viaBuiltIn((fetch) => floorModern(target.url, fetch)),
        floorWarm: () => viaBuiltIn((fetch) => floorModern(target.url, fetch, { known: true })),
      },
      { warmup: cfg.warmup, runs: cfg.httpRuns },
    );
    rows.push(
      timeRow(
        "Modern 2026-07-28 HTTP, cold",
        r.oursCold,
        "v2 auto",
        r.v2Auto,
        "2 POST (discover + list)",
        undefined,
        undefined,
        r.floor,
      ),
      timeRow(
        "Modern 2026-07-28 HTTP, warm",
        r.oursWarm,
        "v2 prior: modern",
        r.v2Prior,
        "1 POST with a stored discover result",
        undefined,
        "ours adopts the discover result kept with its era hint; the tool listing confirms it",
        r.floorWarm,
        { ratio: 1.0, maxPosts: 1 },
      ),
    );
  }

  // 2024-11-05 HTTP+SSE with the transport named (auto-detection is §5).
  {
    const target = http("legacy-sse-2024-11-05");
    const r = await interleave(
      {
        ours: () =>
          viaBuiltIn((fetch) => ours(target, { transport: "sse", eraHints: false, deps: { fetch } })),
        v2: () => timedEstablish((fetch) => officialV2(target, { fetch, negotiation: "legacy" })),
        v1: () => timedEstablish((fetch) => officialV1(target, { fetch })),
      },
      { warmup: cfg.warmup, runs: cfg.httpRuns },
    );
    rows.push(
      timeRow("HTTP+SSE 2024-11-05, transport: sse", r.ours, "v2 (SSE, legacy mode)", r.v2, "3 POST + 1 GET"),
      timeRow("HTTP+SSE 2024-11-05, transport: sse", r.ours, "v1 (SSE)", r.v1, "3 POST + 1 GET"),
    );
  }

  // stdio: the wire is pipes, so the count is of processes spawned and messages the server read,
  // taken in a separate untimed pass with a tally preloaded into the server.
  for (const [name, label, era] of [
    ["legacy-stdio", "stdio legacy (2025-11-25)", "legacy"],
    ["modern-stdio", "stdio modern (2026-07-28)", "modern"],
  ] as const) {
    const server = stdioServer(fleet, name);
    const target: Target = { kind: "stdio", command: server.command, args: [...server.args] };
    const hints = new MemoryEraHints();
    const discover = era === "modern" ? await storedDiscover(target) : undefined;
    const prior = discover ? ({ kind: "modern", discover } as const) : ({ kind: "legacy" } as const);
    const variants = {
      oursCold: (t: Target) => ours(t, { eraHints: false }),
      oursWarm: (t: Target, h: MemoryEraHints) => ours(t, { eraHints: h }),
      v2Auto: (t: Target) => officialV2(t),
      v2Prior: (t: Target) => officialV2(t, { prior }),
      v1: (t: Target) => officialV1(t),
    };
    const plan: Record<string, () => Promise<EstablishSample>> = {
      oursCold: () => timedEstablish(() => variants.oursCold(target)),
      oursWarm: () => timedEstablish(() => variants.oursWarm(target, hints)),
      v2Auto: () => timedEstablish(() => variants.v2Auto(target)),
      v2Prior: () => timedEstablish(() => variants.v2Prior(target)),
    };
    if (era === "legacy") {
      plan.v1 = () => timedEstablish(() => variants.v1(target));
      plan.floor = () => timedEstablish(() => floorStdio(target.command, target.args));
    }
    const r = await interleave(plan, { warmup: Math.min(cfg.warmup, 2), runs: cfg.stdioRuns });
    const tallier = new StdioTallier(server);
    const tally = async (make: (t: Target) => Promise<BenchClient>) =>
      formatTally(
        await tallier.count(async (t) => {
          const c = await make(t);
          await c.listTools();
          await c.close();
        }),
      );
    const tallyHints = new MemoryEraHints();
    const wires = {
      // The cold count runs first and leaves nothing behind; the warm count finds the hint that
      // a first, uncounted connection stored under the tallied command line.
      oursCold: await tally(variants.oursCold),
      oursWarm: await (async () => {
        await tally((t) => variants.oursWarm(t, tallyHints));
        return tally((t) => variants.oursWarm(t, tallyHints));
      })(),
      v2Auto: await tally(variants.v2Auto),
      v2Prior: await tally(variants.v2Prior),
      v1: era === "legacy" ? await tally(variants.v1) : "",
    };
    tallier.dispose();
    const minimum = era === "legacy" ? "1 spawn, 4 msgs (probe + 3)" : "1 spawn, 2 msgs";
    const warmMinimum = era === "legacy" ? "1 spawn, 3 msgs" : "1 spawn, 1 msg with a stored discover result";
    rows.push(
      timeRow(`${label}, cold`, r.oursCold!, "v2 auto", r.v2Auto!, minimum, {
        ours: wires.oursCold,
        official: wires.v2Auto,
      }),
      timeRow(
        `${label}, warm era hint`,
        r.oursWarm!,
        `v2 prior: ${prior.kind}`,
        r.v2Prior!,
        warmMinimum,
        { ours: wires.oursWarm, official: wires.v2Prior },
        undefined,
        r.floor,
      ),
    );
    if (era === "legacy" && r.v1) {
      rows.push(
        timeRow(
          `${label}, warm era hint`,
          r.oursWarm!,
          "v1",
          r.v1,
          "1 spawn, 3 msgs",
          { ours: wires.oursWarm, official: wires.v1 },
          undefined,
          r.floor,
        ),
      );
    }
  }
  return rows;
}

/** A discover result as v2 stores it, for its `prior: modern` connect. */
async function storedDiscover(target: Target): Promise<DiscoverResult> {
  const c = await officialV2(target);
  const discover = c.discoverResult();
  await c.close();
  if (!discover) throw new Error("bench: the modern server gave v2 no discover result");
  return discover;
}
