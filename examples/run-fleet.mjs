// `npm start`: starts every bundled example server and runs `tether tools` against each, printing
// what was negotiated and the tools found; then a short tour of the other commands against
// server-everything (templates, complete, a call that reports progress, a two-second watch).
// Exits non-zero if any server could not be listed or a tour step failed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFleet } from "./fleet.mjs";

const bin = fileURLToPath(new URL("../dist/tether.mjs", import.meta.url));

function tether(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const fleet = await startFleet();
let failures = 0;
try {
  const targets = [
    ...fleet.servers.map((s) => ({ name: s.name, args: [s.url] })),
    ...fleet.stdio.map((s) => ({ name: s.name, args: ["--", s.command, ...s.args] })),
  ];
  for (const t of targets) {
    const started = performance.now();
    const r = await tether(["tools", "--events", ...t.args]);
    const ms = Math.round(performance.now() - started);
    const established = r.err
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "established");
    const how = established
      ? `${established.protocolVersion} ${established.era} ${established.mode}`
      : "failed";
    console.log(`\n== ${t.name}: ${how} (${ms} ms, exit ${r.code})`);
    if (r.code === 0) process.stdout.write(r.out);
    else {
      failures++;
      console.log(r.err.trim().split("\n").at(-1));
    }
  }

  const everything = fleet.stdio.find((s) => s.name === "everything-stdio");
  if (everything) {
    const target = ["--", everything.command, ...everything.args];
    const tour = [
      ["resource templates", ["templates", ...target]],
      [
        "completion of a prompt argument",
        ["complete", "prompt:completable-prompt", "department=E", ...target],
      ],
      [
        "a call that reports progress (on a terminal, a progress line shows while it runs)",
        ["call", "trigger-long-running-operation", "duration=1", "steps=3", ...target],
      ],
      [
        "two seconds of server notifications",
        ["watch", "--log-level", "debug", "--duration", "2000", ...target],
      ],
    ];
    console.log("\n== a short tour against server-everything");
    for (const [what, args] of tour) {
      const shown = args.slice(0, args.indexOf("--")).join(" ");
      console.log(`\n$ tether ${shown} -- <server-everything>   # ${what}`);
      const r = await tether(args);
      if (r.code === 0) process.stdout.write(r.out || "(nothing arrived)\n");
      else {
        failures++;
        console.log(r.err.trim().split("\n").at(-1));
      }
    }
  }
} finally {
  await fleet.close();
}
process.exitCode = failures === 0 ? 0 : 1;
