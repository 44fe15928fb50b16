// The floor for any stdio bridge: a process between host and server that only moves bytes. No
// parsing, no budgets, no translation; what a real bridge costs beyond this is its own work.
//
//   node bench/scripts/floor-relay.mjs -- <server command...>
import { spawn } from "node:child_process";

const dash = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(dash + 1);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 0));
