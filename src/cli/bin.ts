import { main } from "./main.ts";

const controller = new AbortController();
const onSignal = (name: string) => () => controller.abort(new Error(name));
process.once("SIGINT", onSignal("SIGINT"));
process.once("SIGTERM", onSignal("SIGTERM"));

const out: (string | Uint8Array)[] = [];
const status = await main(process.argv.slice(2), {
  stdout: (t) => {
    out.push(t);
  },
  stdoutBytes: (b) => {
    out.push(b);
  },
  // Lifecycle events stream as they come; the error record is the last line.
  stderr: (t) => {
    process.stderr.write(t);
  },
  env: process.env,
  isTty: process.stdout.isTTY === true,
  stderrIsTty: process.stderr.isTTY === true,
  columns: process.stdout.columns,
  signal: controller.signal,
});
// Output is written whole, at the end, so a failure never leaves anything partial on stdout.
const whole = Buffer.concat(out.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
process.stdout.write(whole, () => process.exit(status));
