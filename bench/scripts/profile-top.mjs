// Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and the
// same grouped by file (or package), as shares of all samples. Used for the profile notes in
// docs/benchmarks.md.
//
//   node bench/scripts/profile-top.mjs <file.cpuprofile> [--top=25] [--files | --groups]
//
// --groups sorts the time into a few kinds (idle left out of the shares): the client's own code,
// fetch (undici), web streams, Node's streams and sockets, events and abort signals, GC, other.

import { readFileSync } from "node:fs";

const [file, ...flags] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: node bench/scripts/profile-top.mjs <file.cpuprofile> [--top=25] [--files]\n");
  process.exit(2);
}
const top = Number(flags.find((f) => f.startsWith("--top="))?.slice(6) ?? 25);
const byFile = flags.includes("--files");
const byGroup = flags.includes("--groups");
const profile = JSON.parse(readFileSync(file, "utf8"));

// Self time per node: samples weighted by the time delta that follows each one.
const self = new Map();
const deltas = profile.timeDeltas ?? [];
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;

/** A short place for a frame: the package name for dependencies, else the path from src/ or bench/. */
function place(url) {
  if (!url) return "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/((?:src|bench|dist|test|\.tmp)\/.*)$/.exec(url);
  if (ours) return ours[1];
  return url.replace(/^file:\/\//, "");
}

/** The kind of work a frame is, for --groups. */
function kind(f) {
  const url = f.url ?? "";
  if (f.functionName === "(idle)") return "idle";
  if (f.functionName === "(garbage collector)") return "GC";
  if (/@modelcontextprotocol|node_modules\/zod|node_modules\/(ajv|eventsource)/.test(url))
    return "client library (official SDK + deps)";
  if (/\/(src|dist)\/|bench-lib|tether-chunks|tether\.mjs/.test(url)) return "client library (ours: src/)";
  if (url.includes("undici")) return "fetch (undici)";
  if (url.includes("webstreams")) return "web streams";
  if (
    /node:(internal\/)?(streams|stream_base|net|_http|internal\/js_stream)/.test(url) ||
    f.functionName === "writev"
  )
    return "Node streams, sockets, writev";
  if (/event_target|abort_controller|node:events|timers/.test(url)) return "events, abort signals, timers";
  if (/task_queues|promises/.test(url) || f.functionName === "runMicrotasks") return "promise jobs";
  return "other (V8, Node internals)";
}

const groups = new Map();
let idle = 0;
for (const node of profile.nodes) {
  const t = self.get(node.id) ?? 0;
  if (t === 0) continue;
  const f = node.callFrame;
  if (byGroup && kind(f) === "idle") {
    idle += t;
    continue;
  }
  const key = byGroup
    ? kind(f)
    : byFile
      ? place(f.url)
      : `${f.functionName || "(anonymous)"}  ${place(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;
  groups.set(key, (groups.get(key) ?? 0) + t);
}
const rows = [...groups.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
const busy = total - idle;
process.stdout.write(
  byGroup
    ? `${(busy / 1000).toFixed(1)} ms busy (${(idle / 1000).toFixed(1)} ms idle left out)\n`
    : `${(total / 1000).toFixed(1)} ms sampled\n`,
);
const whole = byGroup ? busy || 1 : total;
for (const [key, t] of rows)
  process.stdout.write(
    `${((100 * t) / whole).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(1).padStart(7)} ms  ${key}\n`,
  );
