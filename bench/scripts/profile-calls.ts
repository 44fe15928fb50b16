// A CPU profile of the call path alone: one established connection, warm-up calls, then N
// sequential (or concurrent) echo calls with V8's sampling profiler running in this process
// (the server runs in its own). Writes a .cpuprofile (open it in Chrome DevTools, or summarise
// it with bench/scripts/profile-top.mjs) and prints CPU µs per call.
//
//   node --import tsx bench/scripts/profile-calls.ts [--client=ours|v1|v2|floor] [--transport=http|stdio]
//        [--calls=3000] [--concurrency=1] [--out=FILE.cpuprofile] [--no-profile]
//   The HTTP floor runs over the client ours uses on Node (node-http.ts), as the bench's does.

import { setMaxListeners } from "node:events";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { NodeHttp } from "../../src/transport/node-http.ts";
import { officialV1, officialV2, ours, type Target } from "../lib/clients.ts";
import { httpServer, startFleet, stdioServer } from "../lib/fleet.ts";
import { floorLegacyStreamable } from "../lib/floor-http.ts";
import { floorStdio } from "../lib/floor-stdio.ts";

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const clientName = arg("client", "ours");
const transport = arg("transport", "http");
const calls = Number(arg("calls", "3000"));
const concurrency = Number(arg("concurrency", "1"));
const out = arg("out", `calls-${clientName}-${transport}.cpuprofile`);
const profile = !process.argv.includes("--no-profile");
delete process.env.NODE_EXTRA_CA_CERTS;
// The official HTTP clients add an abort listener per call to one signal (see run.ts).
setMaxListeners(100_000);

const fleet = await startFleet([transport === "http" ? "streamable-2025-11-25-json" : "legacy-stdio"]);
try {
  let target: Target;
  if (transport === "http") {
    const s = httpServer(fleet, "streamable-2025-11-25-json");
    target = { kind: "http", url: s.url, transport: "streamable-http" };
  } else {
    const s = stdioServer(fleet, "legacy-stdio");
    target = { kind: "stdio", command: s.command, args: [...s.args] };
  }
  const client =
    clientName === "v1"
      ? await officialV1(target)
      : clientName === "v2"
        ? await officialV2(target, { negotiation: "legacy" })
        : clientName === "floor"
          ? target.kind === "http"
            ? await floorLegacyStreamable(target.url, new NodeHttp().fetch)
            : await floorStdio(target.command, target.args)
          : await ours(target);
  const args = { message: "hello" };
  for (let i = 0; i < 200; i++) await client.callTool("echo", args);
  const session = new Session();
  if (profile) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  const each = Math.ceil(calls / concurrency);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < each; i++) await client.callTool("echo", args);
    }),
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (profile) {
    const { profile: p } = await session.post("Profiler.stop");
    writeFileSync(out, JSON.stringify(p));
    session.disconnect();
  }
  const n = each * concurrency;
  process.stdout.write(
    `${clientName} ${transport} ×${concurrency}: ${n} calls, ${((used.user + used.system) / n).toFixed(0)} µs CPU/call, ${((n / ms) * 1000).toFixed(0)} calls/s${profile ? `; profile in ${out}` : ""}\n`,
  );
  await client.close();
} finally {
  await fleet.close();
}
