// One §4 measurement in a process of its own: connect, warm up, settle the heap, then call `big`
// once while sampling RSS, and print one JSON line. Run by sections/memory.ts:
//
//   node --expose-gc --import tsx bench/memory-probe.ts <ours|v1|v2> <url> <bytes> <maxResponseBytes>

import { type BenchClient, officialV1, officialV2, ours } from "./lib/clients.ts";

const SAMPLE_EVERY_MS = 2;

const [which, url, bytesArg, maxArg] = process.argv.slice(2);
const bytes = Number(bytesArg);
const maxResponseBytes = Number(maxArg);
const target = { kind: "http", url: url!, transport: "streamable-http" } as const;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("memory-probe: run with --expose-gc");

let client: BenchClient;
if (which === "ours") {
  client = await ours(target, {
    transport: "streamable-http",
    eraHints: false,
    listen: false,
    call: { maxResponseBytes },
  });
} else if (which === "v2") client = await officialV2(target, { negotiation: "legacy" });
else if (which === "v1") client = await officialV1(target);
else throw new Error(`memory-probe: unknown client ${which}`);

// The code paths of a call run once before the baseline, so their one-off costs are not "growth".
await client.listTools();
await client.callTool("big", { bytes: 1024 });
for (let i = 0; i < 3; i++) {
  gc();
  await new Promise((r) => setTimeout(r, 30));
}

const baselineRss = process.memoryUsage().rss;
const maxRssAtBaseline = process.resourceUsage().maxRSS * 1024;
let peakRss = baselineRss;
const sampler = setInterval(() => {
  const rss = process.memoryUsage().rss;
  if (rss > peakRss) peakRss = rss;
}, SAMPLE_EVERY_MS);

const started = performance.now();
let outcome: { ok: boolean; textBytes?: number; code?: string; reason?: string };
try {
  const result = (await client.callTool("big", { bytes }, maxResponseBytes)) as {
    content?: { text?: string }[];
  };
  outcome = { ok: true, textBytes: result.content?.[0]?.text?.length ?? 0 };
} catch (error) {
  const e = error as { code?: unknown; reason?: unknown; name?: string };
  outcome = {
    ok: false,
    code: typeof e.code === "string" ? e.code : (e.name ?? "error"),
    reason: typeof e.reason === "string" ? e.reason : undefined,
  };
}
const ms = performance.now() - started;
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
// The sampler cannot run while a long synchronous step (a 200 MB JSON.parse) holds the thread;
// the kernel's high-water mark can. It only counts if it rose after the baseline.
const maxRssEnd = process.resourceUsage().maxRSS * 1024;
const peak = maxRssEnd > maxRssAtBaseline ? Math.max(peakRss, maxRssEnd) : peakRss;

process.stdout.write(
  `${JSON.stringify({ which, bytes, maxResponseBytes, ms, baselineRss, peakRss: peak, growth: peak - baselineRss, ...outcome })}\n`,
);
await client.close();
process.exit(0);
