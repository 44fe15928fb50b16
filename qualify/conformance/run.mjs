// Runs the official conformance suite's client scenarios against tether (qualify/conformance/
// client.mjs on the project's own Node), with the suite itself on the Node 22 it needs. The auth
// scenarios are in baseline.yml: expected to fail until tether has OAuth.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const node22 = join(dir, "node_modules", ".bin", "node");
const suite = join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const client = `${process.execPath} ${join(dir, "client.mjs")}`;
const results = join(dir, "..", "..", ".tmp", "conformance");
mkdirSync(results, { recursive: true });

const rows = [];
let failed = false;
for (const scenario of ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]) {
  const r = spawnSync(node22, [suite, "client", "--command", client, "--scenario", scenario], {
    cwd: results,
    encoding: "utf8",
  });
  const text = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  const passed = r.status === 0 && /OVERALL: PASSED/.test(text);
  const counts = /Passed: (\d+)\/(\d+)/.exec(text);
  rows.push([scenario, passed ? "pass" : "FAIL", counts ? `${counts[1]}/${counts[2]} checks` : "-"]);
  if (!passed) {
    failed = true;
    process.stdout.write(r.stdout ?? "");
    process.stderr.write(r.stderr ?? "");
  }
}
const auth = spawnSync(
  node22,
  [suite, "client", "--command", client, "--suite", "auth", "--expected-failures", join(dir, "baseline.yml")],
  {
    cwd: results,
    encoding: "utf8",
  },
);
rows.push([
  "auth/* (baseline: expected to fail, no OAuth yet)",
  auth.status === 0 ? "as expected" : "UNEXPECTED",
  "",
]);
if (auth.status !== 0) {
  failed = true;
  process.stdout.write((auth.stdout ?? "").slice(-4000));
}
const width = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(`\n${"scenario".padEnd(width)}  result       checks\n`);
for (const [name, result, checks] of rows)
  process.stdout.write(`${name.padEnd(width)}  ${result.padEnd(11)}  ${checks}\n`);
process.exit(failed ? 1 : 0);
