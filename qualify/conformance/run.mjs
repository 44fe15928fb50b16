// Runs every client scenario of the official conformance suite against tether (client.mjs on the
// project's own Node), with the suite itself on the Node 22 it needs. Two suite versions side by
// side (the pinned release and the newest one), and each scenario twice: at the spec version the
// suite picks for it, and with 2026-07-28 forced. Prints one row per run with its checks and
// verdict, then a summary per suite and spec version.
//
// baseline.yml names each run expected to fail, and why. A run in the baseline that passes is a
// failure too: the baseline only shrinks.
//
// The newest suite takes the spec version itself (`--spec-version 2026-07-28 --force`) and tells
// the client in MCP_CONFORMANCE_PROTOCOL_VERSION. 0.1.16 predates both, so this runner sets that
// variable for it (the suite passes its environment on to the client): the newest dated version
// the scenario lists by default, 2026-07-28 when forced.
//
// Environment: CONFORMANCE_JOBS (runs at once, default 3), CONFORMANCE_ONLY (a substring: only the
// scenarios whose name contains it), TETHER_CONFORMANCE_LIB (tether's entry point; see harness.mjs).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";

const dir = dirname(fileURLToPath(import.meta.url));
const node22 = join(dir, "node_modules", ".bin", "node");
const client = `${process.execPath} ${join(dir, "client.mjs")}`;
const results = join(dir, "..", "..", ".tmp", "conformance", "runs");
const FORCED = "2026-07-28";
const JOBS = Math.max(1, Number(process.env.CONFORMANCE_JOBS ?? 3) || 3);
const ONLY = process.env.CONFORMANCE_ONLY;
/** Past the suite's own 30 s client timeout: a suite process still running by then is stuck. */
const RUN_LIMIT_MS = 120_000;

const SUITES = [
  { pkg: join(dir, "node_modules", "@modelcontextprotocol", "conformance"), takesSpecVersion: false },
  { pkg: join(dir, "node_modules", "conformance-next"), takesSpecVersion: true },
].map((s) => ({
  ...s,
  entry: join(s.pkg, "dist", "index.js"),
  version: JSON.parse(readFileSync(join(s.pkg, "package.json"), "utf8")).version,
}));

/** The suite's client scenarios with the spec versions it lists for each. */
function listScenarios(suite) {
  const r = spawnSync(node22, [suite.entry, "list", "--client"], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`conformance ${suite.version} list failed: ${r.stderr}`);
  return [...r.stdout.matchAll(/^\s+- (\S+)(?: \[([^\]]*)\])?$/gm)].map((m) => ({
    name: m[1],
    versions: m[2] ? m[2].split(",") : [],
  }));
}

/**
 * Baseline entries by suite version: `scenario` (both of its runs) or `scenario@leg` (leg:
 * `default` or `2026-07-28`). A suite version with no section is expected to pass everything.
 */
function loadBaseline() {
  const data = parseYaml(readFileSync(join(dir, "baseline.yml"), "utf8")) ?? {};
  return (suite, name, leg) => {
    const entries = data[suite.version] ?? [];
    return entries.includes(name) || entries.includes(`${name}@${leg}`);
  };
}

function runsOf(suite, scenarios) {
  const runs = [];
  for (const { name, versions } of scenarios) {
    if (ONLY && !name.includes(ONLY)) continue;
    for (const leg of ["default", FORCED]) {
      const args = ["--scenario", name];
      const env = { ...process.env };
      delete env.MCP_CONFORMANCE_PROTOCOL_VERSION;
      if (suite.takesSpecVersion) {
        if (leg === FORCED) args.push("--spec-version", FORCED, "--force");
      } else {
        const dated = versions.filter((v) => /^\d{4}-\d{2}-\d{2}$/.test(v)).sort();
        const spec = leg === FORCED ? FORCED : dated.at(-1);
        if (spec) env.MCP_CONFORMANCE_PROTOCOL_VERSION = spec;
      }
      // A scenario introduced at 2026-07-28 already runs there by default: forcing it would
      // repeat the very same run, so its forced row reports the default run.
      const same = suite.takesSpecVersion && leg === FORCED && versions[0] === FORCED;
      runs.push({ suite, name, leg, args, env, same });
    }
  }
  return runs;
}

function findFile(root, file) {
  if (!existsSync(root)) return undefined;
  for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === file) return join(entry.parentPath ?? entry.path, entry.name);
  }
  return undefined;
}

function execute(run, index) {
  const out = join(results, run.suite.version, run.leg, String(index));
  mkdirSync(out, { recursive: true });
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(node22, [run.suite.entry, "client", "--command", client, ...run.args, "-o", out], {
      cwd: out,
      env: run.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let text = "";
    child.stdout.on("data", (d) => {
      text += d;
    });
    child.stderr.on("data", (d) => {
      text += d;
    });
    const limit = setTimeout(() => child.kill("SIGKILL"), RUN_LIMIT_MS);
    child.on("close", (status, signal) => {
      clearTimeout(limit);
      const checksFile = findFile(out, "checks.json");
      const stderrFile = findFile(out, "stderr.txt");
      const checks = checksFile ? JSON.parse(readFileSync(checksFile, "utf8")) : [];
      const clientLog = stderrFile ? readFileSync(stderrFile, "utf8") : "";
      const spec = /\[client\] scenario \S+, spec version (\S+)/.exec(clientLog)?.[1];
      resolve({
        ...run,
        status: signal ? signal : status,
        passed: status === 0 && /OVERALL: PASSED/.test(text),
        skipped: /^SKIPPED: /m.test(text),
        ok: checks.filter((c) => c.status === "SUCCESS").length,
        total: checks.filter((c) => c.status === "SUCCESS" || c.status === "FAILURE").length,
        warnings: checks.filter((c) => c.status === "WARNING").length,
        spec: spec ?? (run.leg === FORCED ? FORCED : "-"),
        ms: Math.round(performance.now() - started),
        text,
      });
    });
  });
}

async function pool(items, size, work) {
  const done = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      done[i] = await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return done;
}

const started = performance.now();
rmSync(results, { recursive: true, force: true });
const baseline = loadBaseline();
const runs = SUITES.flatMap((suite) => runsOf(suite, listScenarios(suite)));
process.stdout.write(`   ${runs.filter((r) => !r.same).length} runs, ${JOBS} at a time\n`);
const executed = await pool(
  runs.filter((r) => !r.same),
  JOBS,
  execute,
);
// A run that failed outside the baseline runs once more, alone, once the others are done: the
// timing checks (sse-retry's reconnect delay) fail on an overloaded machine. Its row says so.
let retried = 0;
for (const [i, first] of executed.entries()) {
  if (first.passed || baseline(first.suite, first.name, first.leg)) continue;
  retried++;
  const second = await execute(first, `${i}-again`);
  if (second.passed) executed[i] = { ...second, firstTry: first };
}
const outcomes = runs.map(
  (r) =>
    executed.find((o) => o.suite === r.suite && o.name === r.name && o.leg === r.leg) ?? {
      ...executed.find((o) => o.suite === r.suite && o.name === r.name),
      leg: r.leg,
      same: true,
    },
);

let failed = false;
const rows = outcomes.map((o) => {
  const listed = baseline(o.suite, o.name, o.leg);
  let result = o.passed ? (o.firstTry ? "pass (2nd run)" : "pass") : "FAIL";
  if (o.skipped) result = "SKIPPED";
  else if (listed) result = o.passed ? "STALE" : "baseline";
  if (!o.same && (result === "FAIL" || result === "STALE" || result === "SKIPPED")) {
    failed = true;
    process.stdout.write(
      `\n--- ${o.suite.version} ${o.name} (${o.leg}): ${result}\n${o.text.slice(-4000)}\n`,
    );
  }
  if (o.firstTry && !o.same) {
    const why = o.firstTry.text.split("\n").filter((l) => /^\s+(Error|Warning): /.test(l));
    process.stdout.write(
      `\n--- ${o.suite.version} ${o.name} (${o.leg}): failed its first run\n${why.join("\n")}\n`,
    );
  }
  o.result = result;
  const checks = `${o.ok}/${o.total}${o.warnings ? ` +${o.warnings}w` : ""}`;
  const spec = o.leg !== FORCED ? o.spec : o.same ? `${FORCED} (= default)` : `${FORCED} (forced)`;
  return [o.suite.version, o.name, spec, checks, result];
});

const head = ["suite", "scenario", "spec version", "checks", "result"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r) => `${r.map((c, i) => c.padEnd(widths[i])).join("  ")}\n`.trimEnd();
process.stdout.write(`\n${line(head)}\n`);
for (const r of rows) process.stdout.write(`${line(r)}\n`);

process.stdout.write("\n");
for (const suite of SUITES) {
  for (const leg of ["default", FORCED]) {
    const mine = outcomes.filter((o) => o.suite === suite && o.leg === leg);
    if (mine.length === 0) continue;
    const pass = mine.filter((o) => o.result.startsWith("pass")).length;
    const again = mine.filter((o) => o.firstTry && !o.same).map((o) => o.name);
    const expected = mine.filter((o) => o.result === "baseline").map((o) => o.name);
    process.stdout.write(
      `conformance ${suite.version}, ${leg === FORCED ? `${FORCED} forced` : "default spec versions"}: ` +
        `${pass}/${mine.length} scenarios pass` +
        (again.length ? ` (on a second run: ${again.join(", ")})` : "") +
        (expected.length ? ` (in the baseline: ${expected.join(", ")})` : "") +
        "\n",
    );
  }
}
const seconds = Math.round((performance.now() - started) / 1000);
process.stdout.write(
  `${executed.length + retried} runs (${retried} of them second runs) in ${seconds} s, ${JOBS} at a time\n`,
);
writeFileSync(
  join(results, "summary.json"),
  JSON.stringify(
    outcomes.map(({ suite, name, leg, spec, ok, total, warnings, result, ms }) => ({
      suite: suite.version,
      scenario: name,
      leg,
      spec,
      checks: { passed: ok, total, warnings },
      result,
      ms,
    })),
    null,
    2,
  ),
);
process.exit(failed ? 1 : 0);
