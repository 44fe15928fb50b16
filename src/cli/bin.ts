import { main } from "./main.ts";

const controller = new AbortController();
const onSignal = (name: string) => () => controller.abort(new Error(name));
process.once("SIGINT", onSignal("SIGINT"));
process.once("SIGTERM", onSignal("SIGTERM"));

let out = "";
let err = "";
const status = await main(process.argv.slice(2), {
  stdout: (t) => {
    out += t;
  },
  stderr: (t) => {
    // Lifecycle events stream as they come; the error record is the last line.
    process.stderr.write(t);
    err += t;
  },
  env: process.env,
  isTty: process.stdout.isTTY === true,
  stderrIsTty: process.stderr.isTTY === true,
  columns: process.stdout.columns,
  signal: controller.signal,
});
// Output is written whole, at the end, so a failure never leaves anything partial on stdout.
process.stdout.write(out, () => process.exit(status));
void err;
