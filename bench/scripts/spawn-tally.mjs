// Preloaded into a stdio server (`node --import bench/scripts/spawn-tally.mjs server.mjs
// --tally=<file>`) for the uninstrumented-run's counterpart: each process appends one line to the
// tally file when it exits, saying it ran and how many messages (lines) it read from its client.
// Only the counting pass uses it; timed runs spawn the server bare.

import { appendFileSync } from "node:fs";

const flag = process.argv.find((a) => a.startsWith("--tally="));
if (flag) {
  const file = flag.slice("--tally=".length);
  let lines = 0;
  // Counted as the server's own listener receives it: a listener of ours would start the stream
  // flowing before the server is ready and take its first messages from it.
  const emit = process.stdin.emit;
  process.stdin.emit = function (event, ...args) {
    if (event === "data") for (const byte of Buffer.from(args[0])) if (byte === 0x0a) lines++;
    return emit.call(this, event, ...args);
  };
  process.on("exit", () => appendFileSync(file, `${JSON.stringify({ pid: process.pid, lines })}\n`));
}
