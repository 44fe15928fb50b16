// Runs the official conformance suite's client scenarios against tether (qualify/conformance/
// client.mjs on the project's own Node), with the suite itself on the Node 22 it needs: the core
// scenarios, the auth suite, and the other auth scenarios (2025-03-26 back-compat, client
// credentials, the draft ones), all against baseline.yml, which names each expected failure and
// why. A scenario in the baseline that passes is a failure too: the baseline must shrink.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const node22 = join(dir, "node_modules", ".bin", "node");
const suite = join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const client = `${process.execPath} ${join(dir, "client.mjs")}`;
const baseline = join(dir, "baseline.yml");
const results = join(dir, "..", "..", ".tmp", "conformance");
mkdirSync(results, { recursive: true });

const CORE = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];
const MORE_AUTH = [
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/client-credentials-jwt",
  "auth/client-credentials-basic",
  "auth/cross-app-access-complete-flow",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
];

function run(args) {
  const r = spawnSync(
    node22,
    [suite, "client", "--command", client, ...args, "--expected-failures", baseline],
    {
      cwd: results,
      encoding: "utf8",
    },
  );
  return { ...r, text: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

const rows = [];
let failed = false;
const fail = (r) => {
  failed = true;
  process.stdout.write(r.text.slice(-6000));
};

for (const scenario of [...CORE, ...MORE_AUTH]) {
  const r = run(["--scenario", scenario]);
  const expected = /Expected failures \(in baseline\)/.test(r.text);
  const passed = r.status === 0 && /OVERALL: PASSED/.test(r.text);
  const counts = /Passed: (\d+)\/(\d+)/.exec(r.text);
  rows.push([
    scenario,
    r.status !== 0 ? "FAIL" : passed ? "pass" : expected ? "baseline" : "FAIL",
    counts ? `${counts[1]}/${counts[2]} checks` : "-",
  ]);
  if (r.status !== 0) fail(r);
}

const auth = run(["--suite", "auth"]);
for (const m of auth.text.matchAll(/^([✓✗]) (auth\/\S+): (\d+) passed, (\d+) failed/gm)) {
  const [, mark, scenario, ok, bad] = m;
  rows.push([scenario, mark === "✓" ? "pass" : "baseline", `${ok}/${Number(ok) + Number(bad)} checks`]);
}
if (auth.status !== 0) {
  rows.push(["auth suite against the baseline", "FAIL", ""]);
  fail(auth);
}

const width = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(`\n${"scenario".padEnd(width)}  result    checks\n`);
for (const [name, result, checks] of rows)
  process.stdout.write(`${name.padEnd(width)}  ${result.padEnd(8)}  ${checks}\n`);
process.exit(failed ? 1 : 0);
