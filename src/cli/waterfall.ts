/**
 * `--trace`'s picture: a command's spans as a waterfall, one row each, indented under its parent:
 * the stage, when it started after the command did, how long it took, its outcome, and a bar on
 * the command's time line scaled to the terminal's width. Plain data in, text out: the spans are
 * read into rows by trace.ts.
 */
import { cutToWidth, displayWidth, padToWidth } from "./display-width.ts";

export interface WaterfallRow {
  /** Already sanitized for a terminal. */
  name: string;
  depth: number;
  startMs: number;
  durationMs: number;
  /** `ok`, or the public error code (`timeout`, `remote_error`, ...) or `tool_error`. */
  outcome: string;
}

const NAME_MAX = 40;
const OUTCOME_MAX = 16;
/** Narrower than this, the bars are left out rather than drawn unreadably small. */
const BAR_MIN = 10;

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : String(Math.round(n))} ms`;

/** The waterfall, `columns` wide at most, ending in a newline; empty for no rows. */
export function waterfall(rows: readonly WaterfallRow[], columns: number, color: boolean): string {
  if (rows.length === 0) return "";
  const total = Math.max(1e-3, ...rows.map((r) => r.startMs + r.durationMs));
  const labels = rows.map((r) => `${"  ".repeat(Math.min(r.depth, 8))}${r.name}`);
  const starts = rows.map((r) => ms(r.startMs));
  const durations = rows.map((r) => ms(r.durationMs));
  const outcomes = rows.map((r) => cutToWidth(r.outcome, OUTCOME_MAX));
  const nameW = Math.min(NAME_MAX, Math.max(5, ...labels.map(displayWidth)));
  const startW = Math.max(5, ...starts.map((s) => s.length));
  const durW = Math.max(8, ...durations.map((s) => s.length));
  const outW = Math.max(7, ...outcomes.map(displayWidth));
  const text = (name: string, start: string, duration: string, outcome: string) =>
    `${padToWidth(cutToWidth(name, nameW), nameW)}  ${start.padStart(startW)}  ${duration.padStart(durW)}  ${padToWidth(outcome, outW)}`;
  // What is left of the width after the columns, a space, and the bar's two ends.
  const barW = columns - displayWidth(text("", "", "", "")) - 3;
  const bars = barW >= BAR_MIN;
  const lines = [text("stage", "start", "duration", "outcome")];
  rows.forEach((r, i) => {
    let line = text(labels[i]!, starts[i]!, durations[i]!, outcomes[i]!);
    if (bars) {
      const offset = Math.min(barW - 1, Math.floor((r.startMs / total) * barW));
      const length = Math.max(1, Math.min(barW - offset, Math.round((r.durationMs / total) * barW)));
      const bar = "█".repeat(length);
      const painted = color ? `\x1b[${r.outcome === "ok" ? 32 : 31}m${bar}\x1b[39m` : bar;
      line += ` |${" ".repeat(offset)}${painted}${" ".repeat(barW - offset - length)}|`;
    }
    lines.push(line);
  });
  return `${lines.join("\n")}\n`;
}
