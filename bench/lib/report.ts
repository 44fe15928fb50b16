import type { Summary } from "./stats.ts";

/** One line of the figures table: ours against an official client (or a floor), and the target. */
export interface Row {
  section: string;
  case: string;
  unit: string;
  ours: Summary;
  /** Requests, spawns or bytes that go with our figure. */
  oursWire?: string;
  official?: { label: string; summary: Summary; wire?: string };
  /** The least a correct client needs, for the wire column. */
  minimum?: string;
  /** The same work with no library at all (raw fetch or raw pipes): what the server alone costs. */
  floor?: Summary;
  /** Ours over official, on medians (or the figure the target is stated in). */
  ratio?: number;
  target?: { text: string; met: boolean };
  note?: string;
}

function num(v: number, unit: string): string {
  if (!Number.isFinite(v)) return "–";
  if (unit === "calls/s") return v.toFixed(0);
  if (unit === "MiB") return v.toFixed(1);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export function formatSummary(s: Summary, unit: string): string {
  if (s.n === 0) return "–";
  return `${num(s.median, unit)} [${num(s.min, unit)}–${num(s.max, unit)}]`;
}

const HEADERS = [
  "§",
  "case",
  "unit",
  "ours median [min–max]",
  "ours wire",
  "official",
  "official median [min–max]",
  "official wire",
  "minimum",
  "floor (no library)",
  "ratio",
  "target",
  "met",
];

function cells(row: Row): string[] {
  return [
    row.section,
    row.case,
    row.unit,
    formatSummary(row.ours, row.unit),
    row.oursWire ?? "",
    row.official?.label ?? "",
    row.official ? formatSummary(row.official.summary, row.unit) : "",
    row.official?.wire ?? "",
    row.minimum ?? "",
    row.floor ? formatSummary(row.floor, row.unit) : "",
    row.ratio === undefined || !Number.isFinite(row.ratio) ? "" : `${row.ratio.toFixed(2)}×`,
    row.target?.text ?? "",
    row.target ? (row.target.met ? "yes" : "**no**") : "",
  ];
}

/** A Markdown table, padded so it also reads as plain text in a terminal. */
export function renderTable(rows: readonly Row[]): string {
  const body = rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  const notes = rows
    .filter((r) => r.note)
    .map((r) => `- §${r.section} ${r.case}: ${r.note}`)
    .join("\n");
  return [line(HEADERS), rule, ...body.map(line)].join("\n") + (notes ? `\n\nNotes:\n${notes}` : "");
}
