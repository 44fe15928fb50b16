// How the soak prints: one line per sample while it runs, then one table of every phase's
// figures and the verdicts that failed, with their numbers.

import type { Check } from "./growth.ts";
import { count, mib, trend } from "./growth.ts";
import type { Sample } from "./resources.ts";
import type { Tally } from "./workloads.ts";

export interface PhaseResult {
  /** e.g. `cycles legacy-stdio`. */
  name: string;
  /** Cycles, or calls for a long-lived client. */
  units: number;
  /** What `units` counts: `cycles`, `calls`, or both for the whole run. */
  unitName: string;
  durationMs: number;
  /** Settled figures before and after the phase. */
  start: Sample;
  end: Sample;
  samples: Sample[];
  tally: Tally;
  checks: Check[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

export function handleSummary(handles: Record<string, number>): string {
  return Object.entries(handles)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, n]) => `${type} ${n}`)
    .join(", ");
}

export function sampleLine(phase: string, progress: string, s: Sample): string {
  return (
    `[${seconds(s.atMs).padStart(7)}] ${phase.padEnd(38)} ${progress.padStart(11)}  ` +
    `rss ${mib(s.rssBytes).padStart(9)}  heap ${mib(s.heapUsedBytes).padStart(8)}  ` +
    `fds ${String(s.fds).padStart(3)}  handles ${String(s.handleTotal).padStart(3)}  children ${s.children}`
  );
}

export function figures(s: Sample): string {
  return (
    `rss ${mib(s.rssBytes)}, heapUsed ${mib(s.heapUsedBytes)}, fds ${s.fds}, ` +
    `handles ${s.handleTotal} (${handleSummary(s.handles) || "none"}), children ${s.children}`
  );
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r, ri) =>
      r
        .map((cell, i) => (i === 0 || ri === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const arrow = (a: number, b: number, format: (n: number) => string = String) => `${format(a)} → ${format(b)}`;

export function summaryTable(results: PhaseResult[]): string {
  const rows = [["phase", "count", "time", "rss", "heapUsed", "fds", "handles", "children", "result"]];
  for (const r of results) {
    rows.push([
      r.name,
      `${r.units} ${r.unitName}`,
      seconds(r.durationMs),
      arrow(r.start.rssBytes, r.end.rssBytes, mib),
      arrow(r.start.heapUsedBytes, r.end.heapUsedBytes, mib),
      arrow(r.start.fds, r.end.fds),
      arrow(r.start.handleTotal, r.end.handleTotal),
      arrow(r.start.children, r.end.children),
      r.checks.every((c) => c.ok) ? "ok" : "FAIL",
    ]);
  }
  return table(rows);
}

/** Each phase's samples between batches: the second quarter's median against the last quarter's. */
export function trendTable(results: PhaseResult[]): string {
  const rows = [["phase (Q2 median → Q4 median)", "samples", "rss", "heapUsed", "fds", "handles"]];
  for (const r of results) {
    if (r.samples.length === 0) continue;
    const cell = (values: number[], format: (n: number) => string) => {
      const t = trend(values);
      return `${format(t.early)} → ${format(t.late)}`;
    };
    rows.push([
      r.name,
      String(r.samples.length),
      cell(
        r.samples.map((s) => s.rssBytes),
        mib,
      ),
      cell(
        r.samples.map((s) => s.heapUsedBytes),
        mib,
      ),
      cell(
        r.samples.map((s) => s.fds),
        count,
      ),
      cell(
        r.samples.map((s) => s.handleTotal),
        count,
      ),
    ]);
  }
  return table(rows);
}

/** Every check of every phase, failed ones first, with their figures. */
export function checkLines(results: PhaseResult[], verbose: boolean): string[] {
  const lines: string[] = [];
  for (const r of results) {
    for (const c of r.checks) {
      if (c.ok && !verbose) continue;
      lines.push(`${c.ok ? "  ok  " : "  FAIL"} ${r.name}: ${c.name}: ${c.detail}`);
    }
  }
  return lines;
}
