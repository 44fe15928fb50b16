// A node:test reporter that prints the fault matrix: every test under test/faults/ (and under
// test/long/, the long suite `npm run test:long` runs apart) as one row (area, contract IDs,
// scenario, result, time), then the whole run's totals as a plain "N passed, N failed" line.
// Used beside the TAP reporter by `npm test` and `npm run test:long`.
const rows = [];
let passed = 0;
let failed = 0;
let skipped = 0;

function area(file) {
  const m = /(?:faults|long)[\\/]([^\\/]+)\.test\.[tj]s$/.exec(file ?? "");
  return m ? m[1] : undefined;
}

export default async function* matrix(source) {
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const d = event.data;
    // Suites report too; count and list only leaf tests.
    if (d.details?.type === "suite") continue;
    if (d.skip || d.todo) skipped++;
    else if (event.type === "test:pass") passed++;
    else failed++;
    const where = area(d.file);
    if (!where) continue;
    const ids = /^((?:[A-Z]\d+[/,]?\s*)+):/.exec(d.name)?.[1]?.trim() ?? "-";
    const scenario = d.name.replace(/^((?:[A-Z]\d+[/,]?\s*)+):\s*/, "");
    const result = d.skip ? "skip" : event.type === "test:pass" ? "pass" : "FAIL";
    rows.push([
      where,
      ids,
      scenario.length > 96 ? `${scenario.slice(0, 95)}…` : scenario,
      result,
      `${Math.round(d.details?.duration_ms ?? 0)}`,
    ]);
  }
  const header = ["area", "contract", "scenario", "result", "ms"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  yield `\nFault matrix (${rows.length} hostile scenarios)\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n`;
  rows.sort((a, b) => a[0].localeCompare(b[0]));
  for (const r of rows) yield `${line(r)}\n`;
  yield `\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`;
}
